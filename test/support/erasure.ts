/**
 * For the erasure specs: every byte a store keeps, the needles to look for in them, the CLI on
 * either store, and loading an `events:export` of an earlier version into a fresh store.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type EventStore, NO_STREAM } from '@filing/event-store';
import { LogStore } from '../esdb-test-server/log-store';
import { type CliResult, runCli } from './cli';
import { TEST_SECRETS_KEY, type TestService } from './service';

/** The environment the CLI needs to reach the service's store (and open what it sealed). */
export function cliEnv(service: Pick<TestService, 'esdb'>, secretsKey = TEST_SECRETS_KEY): NodeJS.ProcessEnv {
  return service.esdb
    ? { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: service.esdb.connectionString, SECRETS_KEY: secretsKey }
    : {};
}

/** `filing <args>` on the service's data (and store), which must answer 0; its stdout. */
export async function cli(
  service: Pick<TestService, 'dataDir' | 'esdb'>,
  args: string[],
  env: NodeJS.ProcessEnv = cliEnv(service),
): Promise<CliResult> {
  const res = await runCli(service.dataDir, args, 120_000, '', env);
  if (res.code !== 0) throw new Error(`filing ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return res;
}

/**
 * Everything the store keeps, as bytes, with the service closed: `events.db` (closing the last
 * connection checkpointed the WAL into it; a WAL left over is included), or the test server's
 * `log.ndjson` after a scavenge (the server is stopped for it and started again), with each
 * event's data and metadata decoded from their base64 too.
 */
export async function storedBytes(service: Pick<TestService, 'dataDir' | 'esdb'>): Promise<Buffer> {
  if (!service.esdb) {
    const file = join(service.dataDir, 'events.db');
    return Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
  }
  await service.esdb.kill();
  const log = new LogStore(service.esdb.dataDir);
  log.scavenge();
  log.close();
  await service.esdb.start();
  const raw = readFileSync(join(service.esdb.dataDir, 'log.ndjson'));
  const decoded = raw
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => (JSON.parse(line) as { events: Array<{ d: string; m: string }> }).events)
    .flatMap((e) => [Buffer.from(e.d, 'base64'), Buffer.from(e.m, 'base64')]);
  return Buffer.concat([raw, ...decoded]);
}

/** A copy of the whole data: `storedBytes`, and every file in DATA_DIR (read models, their WALs). */
export async function dataBytes(service: Pick<TestService, 'dataDir' | 'esdb'>): Promise<Buffer> {
  const files = readdirSync(service.dataDir)
    .map((f) => join(service.dataDir, f))
    .filter((f) => statSync(f).isFile());
  return Buffer.concat([await storedBytes(service), ...files.map((f) => readFileSync(f))]);
}

/** A key (or any secret bytes) in every spelling a file or an export might hold it. */
export function spellings(name: string, bytes: Buffer): Array<[string, Buffer]> {
  return [
    [`${name} (raw)`, bytes],
    [`${name} (base64)`, Buffer.from(bytes.toString('base64'))],
    [`${name} (base64url)`, Buffer.from(bytes.toString('base64url'))],
    [`${name} (hex)`, Buffer.from(bytes.toString('hex'))],
  ];
}

/** The names of the needles found in the haystack. */
export function found(haystack: Buffer, needles: Array<[string, Buffer]>): string[] {
  return needles.filter(([, needle]) => haystack.includes(needle)).map(([name]) => name);
}

/** Every sealed secret (`v1.<key id>.<…>`, crypto/secret-box.ts) in the bytes. */
export function sealedSecretsIn(bytes: Buffer): string[] {
  return [...new Set(bytes.toString('latin1').match(/v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]{40,}/g) ?? [])];
}

/**
 * Appends the events of an `events:export` (NDJSON, oldest first) to a fresh store, each at the
 * revision it had: the store then holds what the exporting version's store held (a deleted
 * stream's events show again: the export does not carry stream deletions).
 */
export async function importExport(store: EventStore, ndjson: string): Promise<number> {
  const lines = ndjson.split('\n').filter((line) => line.trim() !== '');
  for (const line of lines) {
    const e = JSON.parse(line) as {
      stream: string;
      revision: number;
      id: string;
      type: string;
      data: object;
      metadata: object;
    };
    await store.appendToStream(
      e.stream,
      [{ id: e.id, type: e.type, data: e.data as never, metadata: e.metadata as never }],
      {
        expectedRevision: e.revision === 0 ? NO_STREAM : BigInt(e.revision - 1),
      },
    );
  }
  return lines.length;
}

/**
 * What the benchmarks' service processes share: the whole app on a temp DATA_DIR (sqlite store,
 * the per-account limit at a rate no run reaches) with one provisioned customer client, entities
 * seeded through the app's own store, and a SIGTERM that closes the app and removes the directory.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { v7 as uuidv7 } from 'uuid';
import { ENTITY_CREATED } from '@filing/entities';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, loadConfig, ProjectionRunner, toEventData } from '@filing/platform';
import { createApp } from '../apps/service/src/bootstrap';
import { UNREACHABLE_RATE_LIMIT } from './report';
import { provisionAccount, type ProvisionedClient } from '../test/support/auth';
import { ProbeModule } from '../test/support/probe.module';

export interface BenchService {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly dataDir: string;
  readonly client: ProvisionedClient;
}

/** `name` prefixes the temp DATA_DIR; `probes` adds the probe routes (test/support/probe.module). */
export async function startBenchService(name: string, options: { probes?: boolean } = {}): Promise<BenchService> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    EVENT_STORE: 'sqlite',
    API_RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
  });
  const app = await createApp(config, options.probes ? { imports: [ProbeModule] } : undefined);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const client = await provisionAccount({ url, app, dataDir, close: () => app.close(), destroy: () => app.close() });
  return { app, url, dataDir, client };
}

/**
 * `count` EntityCreated events of the client's account appended straight to the app's store by 64
 * callers at once (so group commit batches them); resolves with their ids, oldest first, once the
 * read models hold every one — they arrive through the projection, as any write does.
 */
export async function seedEntities({ app, client }: BenchService, count: number): Promise<string[]> {
  const store = app.get<EventStore>(EVENT_STORE);
  const ids = Array.from({ length: count }, () => uuidv7());
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < count) {
        const i = next++;
        const meta = buildMetadata({
          account_id: client.accountId,
          actor: `client:${client.clientId}`,
          correlation_id: randomUUID(),
          causation_id: null,
        });
        const data = {
          entity_id: ids[i],
          name: `Entity ${i}`,
          entity_type: 'llc',
          status: 'active',
          formation_jurisdiction: 'US-DE',
          formation_date: '2020-01-31',
        };
        await store.appendToStream(`entity-${ids[i]}`, [toEventData({ type: ENTITY_CREATED, data }, meta)]);
      }
    }),
  );
  const head = await store.headPosition();
  if (head && !(await app.get(ProjectionRunner).waitFor(head, 120_000)))
    throw new Error('The read models did not catch up with the seed');
  return ids;
}

/**
 * Prints `ready` as one JSON line on stdout, then serves until SIGTERM; then `beforeClose` (if
 * any), the app's close, and the temp DATA_DIR removed; exits 1 if the close failed. The handler
 * is in place before the line goes out: the parent may signal the moment it reads it.
 */
export function serveUntilSigterm(
  { app, dataDir }: BenchService,
  ready: object,
  beforeClose?: () => Promise<void>,
): void {
  // The app's own shutdown hooks (enableShutdownHooks) close it and raise SIGTERM again, which
  // ended the process before the directory was removed: every run left its DATA_DIR in /tmp.
  process.removeAllListeners('SIGTERM');
  process.once('SIGTERM', () => {
    void (beforeClose ?? (() => Promise.resolve()))()
      .then(() => app.close())
      .then(
        () => 0,
        (err: unknown) => {
          console.error(err);
          return 1;
        },
      )
      .then((code) => {
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(code);
      });
  });
  process.stdout.write(JSON.stringify(ready) + '\n');
}

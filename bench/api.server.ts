/**
 * The service under load for `npm run bench -- api`, in its own process: the whole app (sqlite
 * store, temp DATA_DIR) plus the probe routes, one customer account with `BENCH_API_ENTITIES`
 * (default 10,000) entities. The entities are appended as EntityCreated events straight to the
 * app's own event store (many at once, so group commit batches them) and reach the read model
 * through the projection, as any write does; the API is not used for seeding, so the seed takes
 * seconds. Prints one JSON line `{url, token, entities, seedMs, dataDir}` on stdout, then serves
 * until SIGTERM.
 *
 * With `BENCH_API_PROFILE=<file.cpuprofile>` it records a CPU profile from the end of the seed to
 * SIGTERM (so the seed is not in it) and writes it there.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { ENTITY_CREATED } from '@filing/entities';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, loadConfig, ProjectionRunner, toEventData } from '@filing/platform';
import { createApp } from '../apps/service/src/bootstrap';
import { UNREACHABLE_RATE_LIMIT } from './report';
import { provisionAccount } from '../test/support/auth';
import { ProbeModule } from '../test/support/probe.module';

const ENTITIES = Number(process.env.BENCH_API_ENTITIES ?? 10_000);
const APPENDERS = 64;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-api-'));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    EVENT_STORE: 'sqlite',
    API_RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
  });
  const app = await createApp(config, { imports: [ProbeModule] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const service = { url, app, dataDir, close: () => app.close(), destroy: () => app.close() };
  const client = await provisionAccount(service);

  const started = performance.now();
  const store = app.get<EventStore>(EVENT_STORE);
  let next = 0;
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      while (next < ENTITIES) {
        const i = next++;
        const id = uuidv7();
        const meta = buildMetadata({
          account_id: client.accountId,
          actor: `client:${client.clientId}`,
          correlation_id: randomUUID(),
          causation_id: null,
        });
        const data = {
          entity_id: id,
          name: `Entity ${i}`,
          entity_type: 'llc',
          status: 'active',
          formation_jurisdiction: 'US-DE',
          formation_date: '2020-01-31',
        };
        await store.appendToStream(`entity-${id}`, [toEventData({ type: ENTITY_CREATED, data }, meta)]);
      }
    }),
  );
  // Served only once the read model has every entity.
  const head = await store.headPosition();
  if (head && !(await app.get(ProjectionRunner).waitFor(head, 120_000)))
    throw new Error('The read models did not catch up with the seed');
  const seedMs = performance.now() - started;

  const profile = process.env.BENCH_API_PROFILE ? await startProfile(process.env.BENCH_API_PROFILE) : null;
  process.stdout.write(JSON.stringify({ url, token: client.token, entities: ENTITIES, seedMs, dataDir }) + '\n');
  process.once('SIGTERM', () => {
    void (profile ? profile() : Promise.resolve())
      .then(() => app.close())
      .finally(() => {
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      });
  });
}

/** Starts the V8 profiler; the returned function stops it and writes the profile to `file`. */
async function startProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

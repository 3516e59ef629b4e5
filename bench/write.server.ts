/**
 * The service under write load for `npm run bench -- write`, in its own process: the whole app
 * (sqlite store, synchronous=FULL, temp DATA_DIR) and one customer account with
 * `BENCH_WRITE_ENTITIES` (default 1,000) entities for orders to reference, seeded through the
 * app's own store as bench/api.server.ts does. Prints one JSON line `{url, token, entityIds}` on
 * stdout, then serves until SIGTERM, reporting its event-loop delay over IPC
 * (bench/event-loop-delay.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { ENTITY_CREATED } from '@filing/entities';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, loadConfig, ProjectionRunner, toEventData } from '@filing/platform';
import { createApp } from '../apps/service/src/bootstrap';
import { serveEventLoopDelay } from './event-loop-delay';
import { UNREACHABLE_RATE_LIMIT } from './report';
import { provisionAccount } from '../test/support/auth';

const ENTITIES = Number(process.env.BENCH_WRITE_ENTITIES ?? 1_000);
const APPENDERS = 64;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-write-'));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    EVENT_STORE: 'sqlite',
    API_RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
  });
  const app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const service = { url, app, dataDir, close: () => app.close(), destroy: () => app.close() };
  const client = await provisionAccount(service);

  const store = app.get<EventStore>(EVENT_STORE);
  const entityIds = Array.from({ length: ENTITIES }, () => uuidv7());
  let next = 0;
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      while (next < ENTITIES) {
        const i = next++;
        const id = entityIds[i];
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
  const head = await store.headPosition();
  if (head && !(await app.get(ProjectionRunner).waitFor(head, 120_000)))
    throw new Error('The read models did not catch up with the seed');

  serveEventLoopDelay();
  process.stdout.write(JSON.stringify({ url, token: client.token, entityIds }) + '\n');
  process.once('SIGTERM', () => {
    void app.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * The service whose memory `npm run bench -- memory` measures (compiled, see bench/replay.bench.ts), in its own process (the parent
 * reads this process's RSS from /proc). Two modes, on one DATA_DIR:
 *
 * - `seed <dataDir> <pending>`: over the events already there, an account with one endpoint
 *   (entity.created, at most 1 send per second, to a closed port, retries an hour apart) and
 *   `pending` entities of that account (created and updated, appended straight to the store as
 *   bench/api.server.ts does): `pending` deliveries that stay pending. Exits once they are all
 *   scheduled.
 * - `serve <dataDir> <steadySeconds>`: a start on that directory, its catch-up (read models,
 *   fan-out), then a steady period with the dispatcher trickling at its endpoint's pace.
 *
 * Prints `PHASE <name> <process.memoryUsage() as JSON>` at each phase's end.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { v7 as uuidv7 } from 'uuid';
import { ENTITY_CREATED, ENTITY_UPDATED } from '@filing/entities';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, loadConfig, ProjectionRunner, toEventData } from '@filing/platform';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../apps/service/src/bootstrap';
import { provisionAccount } from '../test/support/auth';
import { apiClient, eventually, fanOutCaughtUp } from '../test/support/webhooks';

const APPENDERS = 64;

const SNAPSHOTS = process.env.BENCH_MEMORY_SNAPSHOTS;

function phase(name: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`PHASE ${name} ${JSON.stringify({ ...process.memoryUsage(), ...extra })}\n`);
  // After the figures: writing a snapshot takes memory of its own.
  if (SNAPSHOTS) writeHeapSnapshot(join(SNAPSHOTS, `${process.argv[2]}-${name}.heapsnapshot`));
}

async function start(dataDir: string): Promise<{ app: NestFastifyApplication; url: string; dataDir: string }> {
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    EVENT_STORE: 'sqlite',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS: '1h',
  });
  const app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), dataDir };
}

function pending(app: NestFastifyApplication): number {
  const row = app
    .get(ProjectionRunner)
    .db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'")
    .get() as { n: number };
  return row.n;
}

async function caughtUp(service: Awaited<ReturnType<typeof start>>): Promise<void> {
  const runner = service.app.get(ProjectionRunner);
  const head = await service.app.get<EventStore>(EVENT_STORE).headPosition();
  if (!(await runner.waitFor(head, 600_000))) throw new Error('the read models did not catch up');
  await fanOutCaughtUp(service as Parameters<typeof fanOutCaughtUp>[0]);
}

async function seed(dataDir: string, count: number): Promise<void> {
  const service = await start(dataDir);
  await caughtUp(service);
  phase('caught-up');
  const acc = await provisionAccount(service as unknown as Parameters<typeof provisionAccount>[0]);
  const api = apiClient(service.url, acc.token);
  const ep = await api('POST', '/external-api/v1/webhook-endpoints', {
    url: 'https://127.0.0.1:1/never',
    event_types: ['entity.created'],
    rate_limit_per_second: 1,
  });
  if (ep.status !== 201) throw new Error(`endpoint: ${ep.status} ${JSON.stringify(ep.body)}`);
  await api('POST', `/external-api/v1/webhook-endpoints/${ep.body.id}/enable`);
  await api('PUT', '/external-api/v1/webhook-settings', { notifications_enabled: true });

  const store = service.app.get<EventStore>(EVENT_STORE);
  let next = 0;
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      while (next < count) {
        const i = next++;
        const id = uuidv7();
        const meta = buildMetadata({
          account_id: acc.accountId,
          actor: 'client:bench',
          correlation_id: randomUUID(),
          causation_id: null,
        });
        const fields = { name: `Pending ${i}`, entity_type: 'llc', formation_jurisdiction: 'US-DE' } as const;
        await store.appendToStream(`entity-${id}`, [
          toEventData({ type: ENTITY_CREATED, data: { entity_id: id, ...fields, status: 'active' } }, meta),
          toEventData(
            { type: ENTITY_UPDATED, data: { entity_id: id, ...fields, status: 'inactive', changed: ['status'] } },
            meta,
          ),
        ]);
      }
    }),
  );
  phase('appended');
  await eventually(() => (pending(service.app) >= count - 100 ? true : undefined), 500);
  phase('seeded', { pending: pending(service.app) });
  await service.app.close();
}

async function serve(dataDir: string, steadySeconds: number): Promise<void> {
  const service = await start(dataDir);
  phase('started');
  await caughtUp(service);
  phase('caught-up', { pending: pending(service.app) });
  await new Promise((resolve) => setTimeout(resolve, steadySeconds * 1000));
  phase('steady', { pending: pending(service.app) });
  await service.app.close();
}

const [mode, dataDir, arg] = process.argv.slice(2);
(mode === 'seed' ? seed(dataDir, Number(arg)) : serve(dataDir, Number(arg))).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

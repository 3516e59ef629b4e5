/**
 * The service under write load for `npm run bench -- write`, in its own process: the whole app
 * (sqlite store, synchronous=FULL, temp DATA_DIR) and one customer account with
 * `BENCH_WRITE_ENTITIES` (default 1,000) entities for orders to reference, seeded through the
 * app's own store as bench/api.server.ts does. Prints one JSON line `{url, token, entityIds}` on
 * stdout, then serves until SIGTERM, reporting its event-loop delay over IPC
 * (bench/event-loop-delay.ts).
 */
import { seedEntities, serveUntilSigterm, startBenchService } from './bench-service';
import { serveEventLoopDelay } from './event-loop-delay';

const ENTITIES = Number(process.env.BENCH_WRITE_ENTITIES ?? 1_000);

async function main(): Promise<void> {
  const service = await startBenchService('write');
  const entityIds = await seedEntities(service, ENTITIES);
  serveEventLoopDelay();
  serveUntilSigterm(service, { url: service.url, token: service.client.token, entityIds });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

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
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { seedEntities, serveUntilSigterm, startBenchService } from './bench-service';
import { answerCpuUsage } from './report';

const ENTITIES = Number(process.env.BENCH_API_ENTITIES ?? 10_000);

async function main(): Promise<void> {
  const service = await startBenchService('api', { probes: true });
  const started = performance.now();
  // Served only once the read model has every entity.
  await seedEntities(service, ENTITIES);
  const seedMs = performance.now() - started;

  const profile = process.env.BENCH_API_PROFILE ? await startProfile(process.env.BENCH_API_PROFILE) : undefined;
  const { url, client, dataDir } = service;
  answerCpuUsage();
  serveUntilSigterm(service, { url, token: client.token, entities: ENTITIES, seedMs, dataDir }, profile);
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

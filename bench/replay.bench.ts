import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@filing/event-store';
import {
  loadConfig,
  newReadModelFile,
  ProjectionRunner,
  publishReadModelFile,
  rebuildReadModels,
} from '@filing/platform';
import { CliModule } from '../apps/cli/src/cli.module';
import { createApp } from '../apps/service/src/bootstrap';
import { generateEntityEvents } from '../test/support/generate-events';
import { printComparison, rate } from './report';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const SMALL = 10_000;

/**
 * Rebuild rate of every registered read model over EVENTS events (entities created and updated),
 * next to a raw paged read of the same events from the store; then the service's start-up time
 * (a restart, to /readyz 200) at 10k events and at EVENTS events.
 */
export async function replayBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-replay-'));
  try {
    const big = join(dir, 'big');
    const small = join(dir, 'small');
    process.stdout.write(`generating ${EVENTS} events… `);
    const genMs = await generateEntityEvents(big, EVENTS);
    console.log(`${Math.round(genMs / 1000)} s`);
    await generateEntityEvents(small, SMALL);

    const rawMs = await rawRead(big);
    const { events, rebuildMs } = await rebuild(big);
    printComparison(
      `replay: rebuild every read model over ${events} events`,
      rate(events, rebuildMs),
      'raw read of the same events from the store (pages of 5000)',
      rate(EVENTS, rawMs),
      'events/s',
    );
    await rebuild(small);

    // The first start of a data directory also builds what is not a read model (the webhook
    // fan-out's own view); the figures are for an ordinary restart.
    await startUp(small);
    await startUp(big);
    const smallStart = await startUp(small);
    const bigStart = await startUp(big);
    console.log(`${'service start-up to /readyz 200, 10k events'.padEnd(58)} ${smallStart.toFixed(0).padStart(10)} ms`);
    console.log(
      `${`service start-up to /readyz 200, ${EVENTS} events`.padEnd(58)} ${bigStart.toFixed(0).padStart(10)} ms`,
    );
    console.log(`${'ratio (large / small)'.padEnd(58)} ${(bigStart / smallStart).toFixed(2).padStart(10)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function rawRead(dataDir: string): Promise<number> {
  const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
  const started = performance.now();
  let from: Parameters<typeof store.readAll>[0] = { from: 'start', maxCount: 5000 };
  let read = 0;
  for (;;) {
    const page = await store.readAll(from);
    read += page.length;
    if (page.length < 5000) break;
    const last = page[page.length - 1].position;
    from = { from: { commit: last.commit + 1n, prepare: last.prepare + 1n }, maxCount: 5000 };
  }
  const ms = performance.now() - started;
  await store.close();
  if (read === 0) throw new Error('raw read saw no events');
  return ms;
}

/** Rebuilds with the projections the CLI registers, and publishes the result for the start-up test. */
async function rebuild(dataDir: string): Promise<{ events: number; rebuildMs: number }> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  try {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    const file = newReadModelFile(dataDir);
    const result = await rebuildReadModels({ store, projections: app.get(ProjectionRunner).registered, file });
    await store.close();
    publishReadModelFile(dataDir, file);
    return { events: result.events, rebuildMs: result.elapsedMs };
  } finally {
    await app.close();
  }
}

async function startUp(dataDir: string): Promise<number> {
  const started = performance.now();
  const app = await createApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = await app.getUrl();
  while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 10));
  const ms = performance.now() - started;
  await app.close();
  return ms;
}

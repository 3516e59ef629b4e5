import { NestFactory } from '@nestjs/core';
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

/**
 * One measurement of the replay bench, in a process of its own as an operator's `replay` is
 * (nothing else in its heap: a rebuild run after reading 1M events in the same process spends
 * ~1.5 µs more per event in the garbage collector). `raw <DATA_DIR>` reads the log in pages of
 * 5,000; `rebuild <DATA_DIR>` rebuilds every read model into a new file and publishes it. Prints
 * one JSON line: the events, the milliseconds, and the CPU time of every thread (µs) while it ran.
 */
async function main(): Promise<void> {
  const [mode, dataDir] = process.argv.slice(2);
  if ((mode !== 'raw' && mode !== 'rebuild') || !dataDir)
    throw new Error('usage: replay.child.ts raw|rebuild <DATA_DIR>');
  const result = mode === 'raw' ? await rawRead(dataDir) : await rebuild(dataDir);
  console.log(JSON.stringify(result));
}

/** What this process prints: events, milliseconds, CPU time of every thread (µs). */
export interface Measured {
  readonly events: number;
  readonly ms: number;
  readonly cpuMicros: number;
}

async function rawRead(dataDir: string): Promise<Measured> {
  const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let from: Parameters<typeof store.readAll>[0] = { from: 'start', maxCount: 5000 };
  let events = 0;
  for (;;) {
    const page = await store.readAll(from);
    events += page.length;
    if (page.length < 5000) break;
    const last = page[page.length - 1].position;
    from = { from: { commit: last.commit + 1n, prepare: last.prepare + 1n }, maxCount: 5000 };
  }
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  await store.close();
  if (events === 0) throw new Error('raw read saw no events');
  return { events, ms, cpuMicros: user + system };
}

/** Rebuilds with the projections the CLI registers, and publishes the result for the start-up test. */
async function rebuild(dataDir: string): Promise<Measured> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  try {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    const file = newReadModelFile(dataDir);
    const cpu = process.cpuUsage();
    const result = await rebuildReadModels({ store, projections: app.get(ProjectionRunner).registered, file });
    const { user, system } = process.cpuUsage(cpu);
    await store.close();
    publishReadModelFile(dataDir, file);
    return { events: result.events, ms: result.elapsedMs, cpuMicros: user + system };
  } finally {
    await app.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

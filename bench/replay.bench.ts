import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeReadModelFile, loadConfig, rebuildPageEvents } from '@filing/platform';
import { createApp } from '../apps/service/src/bootstrap';
import { generateEntityEvents } from '../test/support/generate-events';
import { writeReadModelRows } from './read-model-write';
import type { Measured } from './replay.child';
import { printBaseline, printComparison, printCpuCeiling, rate } from './report';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const SMALL = 10_000;
/** Deliveries left pending in the memory run (of at least 2 × PENDING events in all): the issue's 1M by default. */
const PENDING = Number(process.env.BENCH_MEMORY_PENDING ?? 1_000_000);
/** The resident-memory budget the memory run is judged by (issue #47). */
const RSS_BUDGET_MB = 300;
const STEADY_SECONDS = Number(process.env.BENCH_MEMORY_STEADY_SECONDS ?? 20);
const MB = 1024 * 1024;

/**
 * Rebuild rate of every registered read model over EVENTS events (entities created and updated),
 * next to a raw paged read of the same events from the store (each twice, each in a process of
 * its own as an operator's `replay` is: bench/replay.child.ts); the service's
 * start-up time (a restart, to /readyz 200) at 10k events and at EVENTS events. The service's
 * memory at that scale is `memoryBench` (`npm run bench -- memory`).
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

    for (let run = 1; run <= 2; run++) {
      console.log(
        `load average before run ${run}: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
      const raw = measure('raw', big);
      const rebuilt = measure('rebuild', big);
      const { events } = rebuilt;
      const rebuildMs = rebuilt.ms;
      printComparison(
        `replay: rebuild every read model over ${events} events`,
        rate(events, rebuildMs),
        'raw read of the same events from the store (pages of 5000)',
        rate(raw.events, raw.ms),
        'events/s',
      );
      // CPU time (every thread of the process) tells a change's cost apart from a busy machine's.
      const perEvent = (micros: number, count: number) => (micros / count).toFixed(2).padStart(10);
      console.log(`${'  CPU per event: rebuild'.padEnd(58)} ${perEvent(rebuilt.cpuMicros, events)} µs`);
      console.log(`${'  CPU per event: raw read'.padEnd(58)} ${perEvent(raw.cpuMicros, raw.events)} µs`);
      printCpuCeiling(
        '  the rebuild at that CPU, every core busy throughout',
        rebuilt.cpuMicros / events,
        { name: 'raw read', rate: rate(raw.events, raw.ms) },
        'events/s',
      );
      // What writing the rebuild's rows costs without our stack: how near the rebuild is to SQLite's limit.
      const readModel = activeReadModelFile(big);
      // The rebuild's own page size for the embedded store.
      const pageEvents = rebuildPageEvents({ kind: 'sqlite' });
      const pages = Math.ceil(events / pageEvents);
      const fromScript = writeReadModelRows(readModel, join(dir, 'raw-write.db'), pages, 'javascript');
      const bySqlite = writeReadModelRows(readModel, join(dir, 'raw-write.db'), pages, 'sqlite');
      printBaseline(
        `the rebuild's rows written from JavaScript (pages of ${pageEvents} events)`,
        rate(events, fromScript),
        rate(events, rebuildMs),
        'events/s',
      );
      printBaseline(
        'the same rows copied by SQLite itself (INSERT … SELECT)',
        rate(events, bySqlite),
        rate(events, rebuildMs),
        'events/s',
      );
    }
    measure('rebuild', small);

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

/** The memory run's service, compiled as production runs it (no TypeScript loader in the process). */
const MEMORY_SERVER = join(__dirname, '..', 'dist', 'bench-memory', 'bench', 'memory.server.js');
/** The Node flags of package.json's `start` (the Dockerfile's CMD has the same): the heap's ceiling. */
const SERVICE_NODE_FLAGS = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((arg) => arg.startsWith('--'));

/**
 * The service's resident memory (RSS, sampled from /proc every 100 ms; peak per phase) over
 * EVENTS events of which PENDING entity creations each left a delivery pending (an endpoint at
 * one send per second to a closed port): the live seeding of those PENDING (appends, then the
 * fan-out and read models catching up), then a restart over the same data (its catch-up, a
 * steady period). Next to a bare Node process, and to the same service on an empty DATA_DIR.
 * The service is compiled first (`nest build` with bench/tsconfig.memory.json): the TypeScript
 * loader alone adds ~70 MB — and started with the Node flags production uses. BENCH_MEMORY_SNAPSHOTS=<dir> also writes a heap snapshot at the end of
 * each phase of the seeding and the restart (after the phase's figures are taken).
 */
export async function memoryBench(): Promise<void> {
  const root = join(__dirname, '..');
  execFileSync(
    join(root, 'node_modules', '.bin', 'nest'),
    ['build', 'service', '--path', 'bench/tsconfig.memory.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  try {
    const data = join(dir, 'data');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const events = Math.max(EVENTS, 2 * PENDING);
    process.stdout.write(`memory: ${events} events with ${PENDING} pending deliveries… `);
    const started = performance.now();
    await generateEntityEvents(data, events - 2 * PENDING);
    const seeded = await measured(['seed', data, String(PENDING)]);
    console.log(`${Math.round((performance.now() - started) / 1000)} s`);
    console.log(
      `load average before: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const bare = await measured(null);
    const idle = await measured(['serve', empty, String(STEADY_SECONDS)]);
    const served = await measured(['serve', data, String(STEADY_SECONDS)]);
    const row = (label: string, rss: number, usage?: Phase['usage']) =>
      console.log(
        `${label.padEnd(58)} ${(rss / MB).toFixed(0).padStart(10)} MB RSS` +
          (usage === undefined
            ? ''
            : `  (then ${(usage.rss / MB).toFixed(0)} MB, heap used ${(usage.heapUsed / MB).toFixed(0)} MB)`),
      );
    console.log(`service started as production starts it: node ${SERVICE_NODE_FLAGS.join(' ')}`);
    row('bare Node process (baseline)', bare[0].peak);
    for (const p of idle) row(`service, empty DATA_DIR: peak to ${p.name}`, p.peak, p.usage);
    const pendingNow = (p: Phase) => (p.usage.pending === undefined ? '' : `, ${p.usage.pending} pending`);
    for (const p of seeded) row(`service seeding, peak to ${p.name}${pendingNow(p)}`, p.peak, p.usage);
    for (const p of served) row(`service, ${events} events${pendingNow(p)}: peak to ${p.name}`, p.peak, p.usage);
    const peak = Math.max(...served.map((p) => p.peak));
    console.log(`${'ratio (service peak / bare Node)'.padEnd(58)} ${(peak / bare[0].peak).toFixed(2).padStart(10)}`);
    // Flat with the backlog: what the pending deliveries add over the same service on an empty DATA_DIR.
    const overIdle = (peak - Math.max(...idle.map((p) => p.peak))) / MB;
    console.log(
      `${`service peak over the empty DATA_DIR's, ${PENDING} pending`.padEnd(58)} ${overIdle.toFixed(0).padStart(10)} MB`,
    );
    const worst = Math.max(peak, ...seeded.map((p) => p.peak)) / MB;
    console.log(
      `${`highest peak vs the ${RSS_BUDGET_MB} MB budget`.padEnd(58)} ${worst.toFixed(0).padStart(10)} MB ${worst <= RSS_BUDGET_MB ? '✓' : '✗'}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Phase {
  readonly name: string;
  /** Highest RSS sampled since the previous phase ended, in bytes. */
  readonly peak: number;
  readonly usage: NodeJS.MemoryUsage & { pending?: number };
}

/**
 * glibc's malloc arenas as the image limits them (the Dockerfile's `ENV MALLOC_ARENA_MAX`): by
 * default each thread that allocates may get an arena of its own, and their free pages stay resident.
 */
const SERVICE_MALLOC_ARENA_MAX = (() => {
  const dockerfile = readFileSync(join(__dirname, '..', 'Dockerfile'), 'utf8');
  const arenas = /^ENV MALLOC_ARENA_MAX=(\d+)$/m.exec(dockerfile)?.[1];
  if (arenas === undefined) throw new Error('The Dockerfile sets no MALLOC_ARENA_MAX: measure as production runs');
  return arenas;
})();

/** Runs the compiled bench/memory.server.ts with `args` (null: a bare Node process for a second), sampling its RSS. */
function measured(args: string[] | null): Promise<Phase[]> {
  const child =
    args === null
      ? spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, [...SERVICE_NODE_FLAGS, MEMORY_SERVER, ...args], {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, MALLOC_ARENA_MAX: SERVICE_MALLOC_ARENA_MAX },
        });
  const phases: Phase[] = [];
  let peak = 0;
  const sample = () => {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (kb) peak = Math.max(peak, Number(kb[1]) * 1024);
    } catch {
      // The process has just ended.
    }
  };
  const timer = setInterval(sample, 100);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let nl;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      const m = /^PHASE (\S+) (.*)$/.exec(line);
      if (!m) continue;
      sample();
      phases.push({ name: m[1], peak, usage: JSON.parse(m[2]) as Phase['usage'] });
      peak = 0;
    }
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`memory.server.js ${args?.join(' ')} exited with ${code}`));
      else resolve(args === null ? [{ name: 'exit', peak, usage: process.memoryUsage() }] : phases);
    });
  });
}

/** The bench/replay.child.ts measurement `mode` of `dataDir`, in a process of its own. */
function measure(mode: 'raw' | 'rebuild', dataDir: string): Measured {
  const out = execFileSync(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'replay.child.ts'), mode, dataDir],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return JSON.parse(out.trim().split('\n').pop() ?? '') as Measured;
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

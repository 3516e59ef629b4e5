import { type ChildProcess, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { cpuUsageOf, rate } from './report';

const ROUND_MS = Number(process.env.BENCH_API_ROUND_MS ?? 1_000);
const ROUNDS = 5;
/** The issue's figure (#16): 64 connections. */
const CONCURRENCY = 64;
/** Only the rows whose label contains this (e.g. `entities` while profiling the service). */
const ONLY = process.env.BENCH_API_ONLY;

interface Target {
  readonly url: string;
  readonly token: string;
  readonly entities: number;
  readonly seedMs: number;
  readonly dataDir: string;
}

interface Measured {
  ok: number;
  failed: number;
  ms: number;
  latencies: number[];
  /** CPU time (µs) of the server process answering the row, over its rounds. */
  cpu: number;
}

interface Row {
  readonly label: string;
  readonly request: () => Promise<boolean>;
  /** The process answering it. */
  readonly server: ChildProcess;
  readonly baseline?: 'bare' | 'raw';
}

/**
 * The list under load: the service in one process (bench/api.server.ts: sqlite store, temp
 * DATA_DIR, one account with 10k entities), each baseline in a process of its own
 * (bench/api.baseline.ts), the load from this process over undici keep-alive pools at a fixed
 * concurrency. Figures as req/s with p50/p99 latency and the answering server's CPU time per
 * request (which other work on the machine skews far less than req/s), measured in alternating
 * rounds:
 *
 * - baselines: a bare Fastify route answering the first page as a literal body, and raw Fastify +
 *   better-sqlite3 doing today's work (token lookup, `SELECT *` page, JSON.stringify);
 * - the app's own bare route (`GET /_probe`: public, no guard, no database);
 * - authenticated `GET /external-api/v1/entities?limit=50` (the first page; and a page 9,950
 *   entities deep, to show the keyset query does not slow with depth), each with its ratio to
 *   both baselines; both are pages asked again and again, which the read model answers from its
 *   kept pages while nothing was written (page-cache.ts);
 * - the same list over 1,000 distinct queries in turn (every cursor × five limits), more than the
 *   read model keeps: the cost of a page no kept page answers.
 *
 * The load generator shares the machine's cores with whichever server is under load; that costs
 * every row alike (same responses, same connections), so the ratios hold better than the figures.
 */
export async function apiBench(): Promise<void> {
  const loadBefore = loadavg()[0];
  const children: ChildProcess[] = [];
  const pools: Pool[] = [];
  try {
    const server = start(children, 'api.server.ts', []);
    const target = await firstLine<Target>(server);
    const bareServer = start(children, 'api.baseline.ts', ['bare', target.dataDir]);
    const bare = await firstLine<{ url: string }>(bareServer);
    const rawServer = start(children, 'api.baseline.ts', ['raw', target.dataDir]);
    const raw = await firstLine<{ url: string }>(rawServer);
    const pool = (url: string) => {
      const p = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
      pools.push(p);
      return p;
    };
    const service = pool(target.url);
    const auth = { authorization: `Bearer ${target.token}` };

    // Every seeded entity is listed (so the figure is over the whole collection), and one deep cursor.
    const ids: string[] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    let deepCursor: string | null = null;
    do {
      const res = await service.request({
        method: 'GET',
        path: `/external-api/v1/entities?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
        headers: auth,
      });
      const page = (await res.body.json()) as { data: { id: string }[]; next_cursor: string | null };
      if (res.statusCode !== 200) throw new Error(`Listing the seed answered ${res.statusCode}`);
      ids.push(...page.data.map((e) => e.id));
      cursor = page.next_cursor;
      if (cursor !== null) cursors.push(cursor);
      if (ids.length === target.entities - 50) deepCursor = cursor;
    } while (cursor !== null);
    if (ids.length !== target.entities || deepCursor === null)
      throw new Error(`Seeded ${target.entities} entities, listed ${ids.length}`);

    const get = (on: Pool, path: string, headers: Record<string, string>) => async () => {
      const res = await on.request({ method: 'GET', path, headers });
      await res.body.text();
      return res.statusCode === 200;
    };
    const list = '/external-api/v1/entities?limit=50';
    // More distinct queries than the read model keeps pages (page-cache.ts), each asked once per
    // rotation: what a list costs when no kept page can answer it.
    const distinct = cursors.flatMap((c) =>
      [48, 49, 50, 51, 52].map((n) => `/external-api/v1/entities?limit=${n}&cursor=${c}`),
    );
    let turn = 0;
    const rotating = async () => get(service, distinct[turn++ % distinct.length], auth)();
    const all: Row[] = [
      {
        label: 'baseline: bare Fastify, literal 50-row body',
        request: get(pool(bare.url), list, {}),
        server: bareServer,
        baseline: 'bare',
      },
      {
        label: 'baseline: raw Fastify + better-sqlite3, today’s work',
        request: get(pool(raw.url), list, auth),
        server: rawServer,
        baseline: 'raw',
      },
      { label: 'app: GET /_probe (public, no guard, no database)', request: get(service, '/_probe', {}), server },
      { label: 'app: GET /entities?limit=50 (first page)', request: get(service, list, auth), server },
      {
        label: `app: GET /entities?limit=50 (page ${target.entities - 50} deep)`,
        request: get(service, `${list}&cursor=${deepCursor}`, auth),
        server,
      },
      {
        label: `app: GET /entities, ${distinct.length} distinct pages in turn`,
        request: rotating,
        server,
      },
    ];
    const rows = all.filter((row) => !ONLY || row.baseline !== undefined || row.label.includes(ONLY));
    // Warm-up, then the figures in alternating rounds, so a change in the machine's load during
    // the run weighs on all of them alike.
    for (const { request } of rows) await load(request, ROUND_MS);
    const totals = rows.map((): Measured => ({ ok: 0, failed: 0, ms: 0, latencies: [], cpu: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { request, server: answering }] of rows.entries()) {
        const cpuBefore = await cpuUsageOf(answering);
        const r = await load(request, ROUND_MS);
        totals[i].cpu += (await cpuUsageOf(answering)) - cpuBefore;
        totals[i].ok += r.ok;
        totals[i].failed += r.failed;
        totals[i].ms += r.ms;
        totals[i].latencies.push(...r.latencies);
      }
    }

    console.log(
      `${target.entities.toLocaleString('en-US')} entities of one account seeded in ${(target.seedMs / 1000).toFixed(1)} s; ` +
        `${CONCURRENCY} concurrent, ${ROUNDS} × ${ROUND_MS} ms each; load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`,
    );
    const rateOf = (i: number) => rate(totals[i].ok, totals[i].ms);
    const baselineRate = (kind: 'bare' | 'raw') => rateOf(rows.findIndex((row) => row.baseline === kind));
    console.log(
      `${'request'.padEnd(54)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
        `${'/ bare'.padStart(7)} ${'/ raw'.padStart(7)} ${'server CPU µs/req'.padStart(18)}`,
    );
    for (const [i, { label }] of rows.entries()) {
      const t = totals[i];
      const perSecond = rateOf(i);
      console.log(
        `${label.padEnd(54)} ${Math.round(perSecond).toLocaleString('en-US').padStart(8)} ` +
          `${percentile(t.latencies, 0.5).toFixed(1).padStart(7)} ${percentile(t.latencies, 0.99).toFixed(1).padStart(7)} ` +
          `${(perSecond / baselineRate('bare')).toFixed(2).padStart(7)} ${(perSecond / baselineRate('raw')).toFixed(2).padStart(7)} ` +
          `${(t.cpu / (t.ok + t.failed)).toFixed(1).padStart(18)}`,
      );
    }
    console.log('targets (#16): the first page ≥ 10,000 req/s, p99 ≤ 20 ms, ≥ 2.00 × raw, ≥ 0.33 × bare');
    const failed = totals.reduce((n, t) => n + t.failed, 0);
    if (failed > 0) throw new Error(`${failed} requests failed`);
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    for (const child of children) child.kill('SIGTERM');
  }
}

/** A bench server in a process of its own (TypeScript through swc, as `npm run bench` itself). */
function start(children: ChildProcess[], script: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join(__dirname, script), ...args], {
    // The IPC channel answers CPU-time questions (report.ts: answerCpuUsage).
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.push(child);
  return child;
}

/** `CONCURRENCY` callers, each sending one request after another until `durationMs` is over. */
async function load(request: () => Promise<boolean>, durationMs: number): Promise<Measured> {
  const result: Measured = { ok: 0, failed: 0, ms: 0, latencies: [], cpu: 0 };
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        if (await request()) result.ok++;
        else result.failed++;
        result.latencies.push(performance.now() - sent);
      }
    }),
  );
  result.ms = performance.now() - started;
  return result;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** The first line a bench server prints: its JSON handshake. */
function firstLine<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as T);
      } catch (err) {
        reject(err);
      }
    });
    lines.once('close', () => reject(new Error('A bench server exited before it was ready')));
  });
}

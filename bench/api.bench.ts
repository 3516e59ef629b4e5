import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { rate } from './report';

const ROUND_MS = Number(process.env.BENCH_API_ROUND_MS ?? 1_000);
const ROUNDS = 5;
const CONCURRENCY = 32;

interface Target {
  readonly url: string;
  readonly token: string;
  readonly entities: number;
  readonly seedMs: number;
}

interface Measured {
  ok: number;
  failed: number;
  ms: number;
  latencies: number[];
}

/**
 * The resource API under load: one service process (bench/api.server.ts: sqlite store, temp
 * DATA_DIR, one account with 10k entities), load from this process over an undici keep-alive pool
 * at a fixed concurrency. Figures, each as req/s with p50/p99 latency, measured in alternating
 * rounds next to a bare route of the same app (`GET /_probe`: public, no guard, no database):
 *
 * - authenticated `GET /external-api/v1/entities?limit=50` (the first page; and a page 9,950
 *   entities deep, to show the keyset query does not slow with depth);
 * - authenticated `POST /external-api/v1/orders` referencing a seeded entity: a reference check,
 *   a durable append (group commit, synchronous=FULL) and the read-your-writes wait per request.
 */
export async function apiBench(): Promise<void> {
  const loadBefore = loadavg()[0];
  const server = spawn(process.execPath, ['-r', '@swc-node/register', join(__dirname, 'api.server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const target = await firstLine(server.stdout);
    const pool = new Pool(target.url, { connections: CONCURRENCY, pipelining: 1 });
    const auth = { authorization: `Bearer ${target.token}` };

    // Every seeded entity is listed (so the figure is over the whole collection), and one deep cursor.
    const ids: string[] = [];
    let cursor: string | null = null;
    let deepCursor: string | null = null;
    do {
      const res = await pool.request({
        method: 'GET',
        path: `/external-api/v1/entities?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
        headers: auth,
      });
      const page = (await res.body.json()) as { data: { id: string }[]; next_cursor: string | null };
      if (res.statusCode !== 200) throw new Error(`Listing the seed answered ${res.statusCode}`);
      ids.push(...page.data.map((e) => e.id));
      cursor = page.next_cursor;
      if (ids.length === target.entities - 50) deepCursor = cursor;
    } while (cursor !== null);
    if (ids.length !== target.entities || deepCursor === null)
      throw new Error(`Seeded ${target.entities} entities, listed ${ids.length}`);

    const get = (path: string, headers: Record<string, string>) => async () => {
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.text();
      return res.statusCode === 200;
    };
    let order = 0;
    const postOrder = async () => {
      const res = await pool.request({
        method: 'POST',
        path: '/external-api/v1/orders',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          entity_id: ids[order++ % ids.length],
          order_type: 'annual_report',
          jurisdiction_code: 'US-DE',
        }),
      });
      await res.body.text();
      return res.statusCode === 201;
    };
    const runs: [label: string, request: () => Promise<boolean>][] = [
      ['bare route, GET /_probe (public, no guard, no database)', get('/_probe', {})],
      ['GET /external-api/v1/entities?limit=50 (first page)', get('/external-api/v1/entities?limit=50', auth)],
      [
        `GET /external-api/v1/entities?limit=50 (page ${target.entities - 50} deep)`,
        get(`/external-api/v1/entities?limit=50&cursor=${deepCursor}`, auth),
      ],
      ['POST /external-api/v1/orders', postOrder],
    ];
    // Warm-up, then the figures in alternating rounds, so a change in the machine's load during
    // the run weighs on all of them alike.
    for (const [, request] of runs) await load(request, ROUND_MS);
    const totals = runs.map((): Measured => ({ ok: 0, failed: 0, ms: 0, latencies: [] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, [, request]] of runs.entries()) {
        const r = await load(request, ROUND_MS);
        totals[i].ok += r.ok;
        totals[i].failed += r.failed;
        totals[i].ms += r.ms;
        totals[i].latencies.push(...r.latencies);
      }
    }
    await pool.close();

    console.log(
      `${target.entities.toLocaleString('en-US')} entities of one account seeded in ${(target.seedMs / 1000).toFixed(1)} s; ` +
        `${CONCURRENCY} concurrent, ${ROUNDS} × ${ROUND_MS} ms each; load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`,
    );
    const baseline = rate(totals[0].ok, totals[0].ms);
    console.log(
      `${'request'.padEnd(62)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'ratio'.padStart(7)}`,
    );
    for (const [i, [label]] of runs.entries()) {
      const t = totals[i];
      const perSecond = rate(t.ok, t.ms);
      console.log(
        `${label.padEnd(62)} ${Math.round(perSecond).toLocaleString('en-US').padStart(8)} ${percentile(t.latencies, 0.5).toFixed(1).padStart(8)} ` +
          `${percentile(t.latencies, 0.99).toFixed(1).padStart(8)} ${(perSecond / baseline).toFixed(2).padStart(7)}`,
      );
    }
    const failed = totals.reduce((n, t) => n + t.failed, 0);
    if (failed > 0) throw new Error(`${failed} requests failed`);
  } finally {
    server.kill('SIGTERM');
  }
}

/** `CONCURRENCY` callers, each sending one request after another until `durationMs` is over. */
async function load(request: () => Promise<boolean>, durationMs: number): Promise<Measured> {
  const result: Measured = { ok: 0, failed: 0, ms: 0, latencies: [] };
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

function firstLine(stream: NodeJS.ReadableStream): Promise<Target> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: stream });
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as Target);
      } catch (err) {
        reject(err);
      }
    });
    lines.once('close', () => reject(new Error('The bench server exited before it was ready')));
  });
}

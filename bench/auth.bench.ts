import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { printComparison, rate } from './report';

const DURATION_MS = Number(process.env.BENCH_AUTH_MS ?? 5_000);
const TOKEN_CONCURRENCY = 16;
const GET_CONCURRENCY = 50;
const ROUNDS = 5;

interface Target {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly token: string;
}

/**
 * The service runs in a child process (bench/auth.server.ts); the load comes from this one over
 * an undici keep-alive pool. Figures: client-credentials tokens issued per second (HTTP Basic; the
 * secret verified once with scrypt, then from the verified-secret cache; every token an appended
 * event, answered after read-your-writes), and authenticated `GET` req/s next to the same
 * handler on a public path (no guard), measured in the same run.
 */
export async function authBench(): Promise<void> {
  const server = spawn(process.execPath, ['-r', '@swc-node/register', join(__dirname, 'auth.server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const target = await firstLine(server.stdout);
    const pool = new Pool(target.url, { connections: GET_CONCURRENCY, pipelining: 1 });
    const basic = `Basic ${Buffer.from(`${target.clientId}:${target.clientSecret}`).toString('base64')}`;

    const tokens = await load(TOKEN_CONCURRENCY, async () => {
      const res = await pool.request({
        method: 'POST',
        path: '/o/token/',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      await res.body.text();
      return res.statusCode === 200;
    });
    const get = (path: string, headers: Record<string, string>) => async () => {
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.text();
      return res.statusCode === 200;
    };
    // Warm-up, then the two GET figures in alternating rounds, so a change in the machine's load
    // during the run weighs on both alike.
    const openGet = get('/_probe', {});
    const guardedGet = get('/external-api/v1/_probe/plain', { authorization: `Bearer ${target.token}` });
    await load(GET_CONCURRENCY, openGet, 1_000);
    await load(GET_CONCURRENCY, guardedGet, 1_000);
    const open = { ok: 0, failed: 0, ms: 0 };
    const guarded = { ok: 0, failed: 0, ms: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [total, request] of [
        [open, openGet],
        [guarded, guardedGet],
      ] as const) {
        const r = await load(GET_CONCURRENCY, request, DURATION_MS / ROUNDS);
        total.ok += r.ok;
        total.failed += r.failed;
        total.ms += r.ms;
      }
    }
    await pool.close();

    console.log(
      `token endpoint, ${TOKEN_CONCURRENCY} concurrent clients, ${DURATION_MS} ms: ${tokens.ok} tokens, ${tokens.failed} failures`,
    );
    console.log(
      `${'tokens issued (POST /o/token/, HTTP Basic)'.padEnd(58)} ${Math.round(rate(tokens.ok, tokens.ms)).toLocaleString('en-US').padStart(10)} tokens/s`,
    );
    printComparison(
      `authenticated GET /external-api/v1/_probe/plain, ${GET_CONCURRENCY} concurrent`,
      rate(guarded.ok, guarded.ms),
      'same handler on a public path, /_probe (no guard)',
      rate(open.ok, open.ms),
      'req/s',
    );
    if (tokens.failed + guarded.failed + open.failed > 0) throw new Error('Some requests failed');
  } finally {
    server.kill('SIGTERM');
  }
}

async function load(concurrency: number, request: () => Promise<boolean>, durationMs = DURATION_MS) {
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        if (await request()) ok++;
        else failed++;
      }
    }),
  );
  return { ok, failed, ms: performance.now() - started };
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

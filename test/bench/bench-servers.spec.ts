import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(__dirname, '..', '..');

/**
 * `npm run bench` starts the whole service in child processes, each on a temp DATA_DIR, and stops
 * them with SIGTERM: each must remove its directory (a write bench's is ~150 MB), not leave it in
 * the machine's temp directory run after run.
 */
describe('bench service processes', () => {
  let tmp: string;
  let child: ChildProcess | undefined;
  beforeEach(() => (tmp = mkdtempSync(join(tmpdir(), 'bench-servers-'))));
  afterEach(() => {
    // A server the test did not see exit would keep Jest from ending.
    child?.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  });

  it('remove their DATA_DIR when stopped with SIGTERM', async () => {
    const server = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'bench', 'auth.server.ts')], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = server;
    const exited = once(server, 'exit');
    const [line] = (await Promise.race([
      once(createInterface({ input: server.stdout }), 'line'),
      exited.then(() => Promise.reject(new Error('the bench server exited before it was ready'))),
    ])) as [string];
    expect(JSON.parse(line)).toHaveProperty('token');
    expect(benchDirs()).toHaveLength(1);

    server.kill('SIGTERM');
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(benchDirs()).toEqual([]);
  }, 60_000);

  /** The bench's own directories (swc-node keeps its compile cache beside them). */
  const benchDirs = () => readdirSync(tmp).filter((name) => name.startsWith('bench-'));
});

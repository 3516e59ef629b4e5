/**
 * The built CLI and service as an operator uses them (CONTRACT.md §6), in a copy of this checkout
 * (node_modules shared) built once with `npm run build`, which `npm ci` runs as its prepare
 * script. `npm run cli -- …` and `npx filing …` answer from dist/ without building again and print
 * one JSON object on stdout, nothing else there (npm's banners go to stderr: .npmrc json=true),
 * also side by side. A second `npm start` on a DATA_DIR in use is refused, and CLI commands keep
 * working beside the running service. The other CLI specs run the source (support/cli.ts runCli).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { requestToken } from '../support/auth';
import { copyCheckout } from '../support/checkout';
import { OPERATOR_CLIS, type OperatorCli, runInCheckout } from '../support/cli';
import { startService, type TestService } from '../support/service';

const run = promisify(execFile);
const VIAS = Object.keys(OPERATOR_CLIS) as OperatorCli[];
const CLI_MAIN = 'dist/apps/cli/apps/cli/src/main.js';

describe('a built checkout', () => {
  let parent: string;
  let checkout: string;
  let npmCache: string;
  let dataDir: string;
  const cli = (via: OperatorCli, args: readonly string[], dir = dataDir) =>
    runInCheckout(checkout, npmCache, dir, [...OPERATOR_CLIS[via], ...args]);
  const json = (result: { code: number; stdout: string; stderr: string }): Record<string, unknown> => {
    if (result.code !== 0) throw new Error(`exit ${result.code}:\n${result.stderr}`);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'filing-checkout-'));
    checkout = copyCheckout(join(parent, 'filing-service'));
    npmCache = join(parent, 'npm-cache');
    dataDir = join(parent, 'data');
    await run('npm', ['run', 'build'], { cwd: checkout, timeout: 300_000 });
  }, 330_000);
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it.each(VIAS)(
    '`%s accounts:create --name N` prints exactly one JSON object on stdout, and builds nothing',
    async (via) => {
      const built = statSync(join(checkout, CLI_MAIN)).mtimeMs;
      const started = performance.now();
      const result = await cli(via, ['accounts:create', '--name', 'Stdout Co']);
      console.log(`${via} accounts:create: ${Math.round(performance.now() - started)} ms (wall time)`);
      expect(json(result)).toEqual({
        id: expect.any(String),
        name: 'Stdout Co',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        version: 0,
      });
      expect(result.stderr).not.toMatch(/nest build|prepare/);
      expect(statSync(join(checkout, CLI_MAIN)).mtimeMs).toBe(built);
    },
    60_000,
  );

  it('runs commands side by side, both ways at once', async () => {
    const results = await Promise.all(
      [...VIAS, ...VIAS].map((via, i) => cli(via, ['accounts:create', '--name', `Side ${i}`])),
    );
    const ids = results.map((result) => json(result).id);
    expect(new Set(ids).size).toBe(4);
  }, 60_000);

  it('says what to run in a checkout that is not built (npx does not build it either)', async () => {
    const unbuilt = copyCheckout(join(parent, 'unbuilt'));
    for (const via of VIAS) {
      const result = await runInCheckout(unbuilt, npmCache, dataDir, [
        ...OPERATOR_CLIS[via],
        'accounts:create',
        '--name',
        'X',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `The CLI is not built (no ${join(unbuilt, CLI_MAIN)}): run \`npm run build\` in ${unbuilt} first.`,
      );
    }
  }, 60_000);

  describe('beside a running service', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startService();
    }, 60_000);
    afterAll(async () => service?.destroy());

    it('a second `npm start` on its DATA_DIR exits 1, naming the directory and the running process', async () => {
      // PORT 0 and a bound wait: were it not refused, it would neither clash nor hang the run.
      const result = await runInCheckout(checkout, npmCache, service.dataDir, ['npm', 'start'], 240_000, { PORT: '0' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `DATA_DIR ${service.dataDir} is in use by another service process (pid ${process.pid}): one service process per DATA_DIR.`,
      );
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    }, 250_000);

    it.each(VIAS)(
      '`%s` commands keep working: an operator client made there gets a token from the service',
      async (via) => {
        const client = json(await cli(via, ['clients:create', '--operator'], service.dataDir));
        await expect(
          requestToken(service.url, String(client.client_id), String(client.client_secret)),
        ).resolves.toEqual(expect.any(String));
      },
      60_000,
    );
  });
});

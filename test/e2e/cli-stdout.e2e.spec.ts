/**
 * CONTRACT.md §6 as an operator types it: `npm run cli -- accounts:create --name N` prints one JSON
 * object on stdout, and nothing else there: npm's own lines (the "> filing-service@0.1.0 cli"
 * banners of precli and cli) go to stderr (.npmrc json=true). The only test that goes through npm
 * and the build: precli runs `nest build cli` first (some 15 s); the other CLI tests run the
 * source directly (test/support/cli.ts runCli).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNpmCli } from '../support/cli';

describe('npm run cli', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'filing-npm-cli-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('-- accounts:create --name N prints exactly one JSON object on stdout', async () => {
    const result = await runNpmCli(dataDir, ['accounts:create', '--name', 'Stdout Co']);
    if (result.code !== 0) throw new Error(`npm run cli exited ${result.code}:\n${result.stderr}`);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(result.stdout)).toEqual({ id: expect.any(String), name: 'Stdout Co', created_at: expect.any(String), updated_at: expect.any(String), version: 0 });
  }, 240_000);
});

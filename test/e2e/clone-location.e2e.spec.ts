/**
 * `npm test` passes from a clone anywhere: under a 0700 directory (`mktemp -d`, /root/...) no other
 * user can read the checkout, yet when run as root config.spec.ts checks DATA_DIR's writability as
 * uid 65534 (root passes every permission check). Runs that spec from such a copy.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { copyCheckout, ROOT } from '../support/checkout';

const run = promisify(execFile);

describe('a clone under a 0700 directory', () => {
  let parent: string;
  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'filing-clone-'));
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('passes the config checks (libs/platform/src/config/config.spec.ts)', async () => {
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    const clone = copyCheckout(join(parent, 'filing-service'));
    const jest = require.resolve('jest/bin/jest', { paths: [ROOT] });
    // execFile rejects (failing this test with jest's report) unless every test passes.
    const { stderr } = await run(
      process.execPath,
      [jest, 'libs/platform/src/config/config.spec.ts', '--ci', '--maxWorkers=1'],
      {
        cwd: clone,
        timeout: 120_000,
      },
    );
    expect(stderr).toMatch(/Tests:\s+(\d+) passed, \1 total/);
    expect(stderr).toContain('refuses a directory it cannot write in');
  }, 150_000);
});

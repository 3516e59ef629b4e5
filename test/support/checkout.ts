import { cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export const ROOT = join(__dirname, '../..');

/** What building, running and testing the apps and libs needs from a checkout. */
const SOURCES = [
  'package.json',
  'package-lock.json',
  '.npmrc',
  '.swcrc',
  'tsconfig.json',
  'nest-cli.json',
  'jest.config.js',
  'apps',
  'libs',
  // Jest's global set-up (jest.config.js), which installs the system tools some specs drive.
  'test/support/system-tools.js',
];

/**
 * A copy of this checkout at `into` as a fresh clone would be after `npm ci` and before any build:
 * the working tree's sources (uncommitted changes too), no dist/, node_modules shared by a symlink.
 */
export function copyCheckout(into: string): string {
  for (const entry of SOURCES) {
    mkdirSync(dirname(join(into, entry)), { recursive: true });
    cpSync(join(ROOT, entry), join(into, entry), {
      recursive: true,
      filter: (from) => !['node_modules', 'dist'].includes(basename(from)),
    });
  }
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(into, 'node_modules'));
  return into;
}

/**
 * Writes the README's configuration table from the declared variables
 * (libs/platform/src/config/variables.ts): `npm run docs:config`. test/meta/config-table.spec.ts
 * fails when the README and the declaration differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configurationTable } from '@filing/platform';

export const README = resolve(__dirname, '..', 'README.md');
export const START =
  '<!-- configuration: generated from libs/platform/src/config/variables.ts by npm run docs:config -->';
export const END = '<!-- end of configuration -->';

/** The README's text with its configuration block replaced by `table`. */
export function withTable(readme: string, table: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no block between "${START}" and "${END}"`);
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

if (require.main === module) writeFileSync(README, withTable(readFileSync(README, 'utf8'), configurationTable()));

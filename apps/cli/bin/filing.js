#!/usr/bin/env node
'use strict';
// `npx filing <command>` and `npm run cli -- <command>`: runs the CLI as built by `npm ci` (its
// prepare script) or `npm run build`. No build here: compiling on every call took seconds, and two
// calls at once deleted each other's dist/.
const { existsSync } = require('node:fs');
const { join, resolve } = require('node:path');

const root = resolve(__dirname, '../../..');
const main = join(root, 'dist/apps/cli/apps/cli/src/main.js');
if (existsSync(main)) {
  require(main);
} else {
  process.stderr.write(`The CLI is not built (no ${main}): run \`npm run build\` in ${root} first.\n`);
  process.exitCode = 1;
}

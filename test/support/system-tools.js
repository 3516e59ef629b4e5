/**
 * Jest's global set-up: the system tools some specs drive — Debian's Chromium (the settings
 * screen's browser test), Caddy (the shipped load balancer, test/support/caddy.ts) and openssl.
 * `npm test` must pass on a fresh machine with nothing but the README's commands, so what is missing is
 * installed here with apt-get when we are root (CI and these machines are); otherwise the run
 * stops with the one command that installs it.
 */
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');

const TOOLS = [
  { path: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', pkg: 'chromium' },
  { path: process.env.CADDY_PATH ?? '/usr/bin/caddy', pkg: 'caddy' },
  // test/support/tls-certs.ts makes the specs' certificates with it; slim images may lack it.
  { path: '/usr/bin/openssl', pkg: 'openssl' },
];

module.exports = async function installSystemTools() {
  const missing = TOOLS.filter((tool) => !existsSync(tool.path)).map((tool) => tool.pkg);
  if (missing.length === 0) return;
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error(`The tests need ${missing.join(' and ')}: run as root \`${command}\`, then npm test again`);
  }
  process.stderr.write(`\nInstalling ${missing.join(', ')} for the tests (apt-get)…\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', ...missing], { stdio: ['ignore', 'ignore', 'inherit'], env });
  for (const tool of TOOLS) if (!existsSync(tool.path)) throw new Error(`${tool.path} still missing after apt-get`);
};

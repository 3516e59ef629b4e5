/**
 * Real Caddy (Debian's package; test/support/system-tools.js installs it) running the project's own
 * `deploy/Caddyfile` in front of service instances on loopback ports — the shipped edge, as a test
 * drives it. Only the global block is ours (no admin API, ports of the test's own, Caddy's internal
 * CA not installed in the system); the site block is the shipped file, with SITE_ADDRESS and
 * SERVICE_UPSTREAMS given through the environment as docker-compose gives them.
 *
 *   const edge = await startCaddy({ upstreams: [service.url] });
 *   await fetch(`${edge.url}/healthz`, { dispatcher: edge.agent() });   // https://localhost:<port>
 *   await edge.stop();
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent } from 'undici';
import { eventually } from './webhooks';

const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';
export const SHIPPED_CADDYFILE = resolve(__dirname, '..', '..', 'deploy', 'Caddyfile');

export interface CaddyEdge {
  /** `https://localhost:<https port>`: the API through the edge. */
  readonly url: string;
  /** `http://localhost:<http port>`: plain HTTP, which answers a redirect. */
  readonly httpUrl: string;
  /** PEM of Caddy's internal root CA (what a developer trusts for `localhost`). */
  readonly caPem: string;
  /** An undici dispatcher that trusts the edge's CA, optionally bound to a source address (another caller). */
  agent(localAddress?: string): Agent;
  /** Caddy's own log lines so far, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

export interface CaddyOptions {
  /** Base URLs (`http://127.0.0.1:<port>`) of the service instances behind the edge. */
  readonly upstreams: readonly string[];
  /** The Caddyfile to run; the shipped one by default. */
  readonly caddyfile?: string;
}

export async function startCaddy(options: CaddyOptions): Promise<CaddyEdge> {
  if (!existsSync(CADDY)) throw new Error(`${CADDY} is missing: apt-get install -y caddy (Jest's global set-up does)`);
  const dir = mkdtempSync(join(tmpdir(), 'filing-caddy-'));
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const global = ['{', '\tadmin off', `\thttp_port ${httpPort}`, `\thttps_port ${httpsPort}`];
  global.push('\tskip_install_trust', '\tdefault_bind 127.0.0.1', '}', '');
  const config = join(dir, 'Caddyfile');
  writeFileSync(config, global.join('\n') + readFileSync(options.caddyfile ?? SHIPPED_CADDYFILE, 'utf8'));
  const upstreams = options.upstreams.map((url) => new URL(url).host).join(' ');
  const child = spawn(CADDY, ['run', '--config', config, '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_DATA_HOME: join(dir, 'data'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      SITE_ADDRESS: 'localhost',
      SERVICE_UPSTREAMS: upstreams,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const rootFile = join(dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  const agents: Agent[] = [];
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`caddy exited ${child.exitCode}:\n${log}`);
        return existsSync(rootFile) && log.includes('serving initial configuration') ? true : undefined;
      },
      25,
      20_000,
    );
  } catch (error) {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const caPem = readFileSync(rootFile, 'utf8');
  return {
    url: `https://localhost:${httpsPort}`,
    httpUrl: `http://localhost:${httpPort}`,
    caPem,
    agent(localAddress) {
      // undici takes the source address as the client's option: one under `connect` is overwritten.
      const agent = new Agent({ connect: { ca: caPem }, ...(localAddress ? { localAddress } : {}) });
      agents.push(agent);
      return agent;
    },
    output: () => log,
    async stop() {
      await Promise.all(agents.map((agent) => agent.close()));
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

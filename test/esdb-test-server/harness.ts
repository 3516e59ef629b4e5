/**
 * Starts the EventStoreDB test server (server.ts) in a child process, for Jest or scripts.
 *
 *   const server = await startEsdbTestServer();
 *   const client = EventStoreDBClient.connectionString(server.connectionString);
 *   await server.dropConnections(); // every connection and subscription drops; the server stays
 *   await server.restart();         // a new process: same port, same data
 *   await server.stop();
 *
 *   const secure = await startEsdbTestServer({ secure: true }); // TLS + admin/changeit
 *   secure.connectionString // esdb://admin:changeit@localhost:<port>?tls=true&tlsCAFile=<ca.crt>
 *
 * The child never outlives this process: it is SIGKILLed on exit, it exits when its stdin pipe or
 * IPC channel closes (which also covers SIGKILL of this process), and it watches its ppid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeTestPki } from '../support/tls-certs';
import type { ControlOp, ControlReply, ServerStats, ServerVersion } from './server';

export type { ServerStats } from './server';

export interface EsdbTestServerOptions {
  /** Where the log is kept. Default: a new temp dir, removed by `stop()`. */
  readonly dataDir?: string;
  /** Default 0: a free port, chosen by the OS and kept across restarts. */
  readonly port?: number;
  /**
   * Default true: ServerFeatures advertises BatchAppend (a 21.10+ server), so the client appends
   * through it. false: an older server without ServerFeatures; the client uses `Append`.
   */
  readonly serverFeatures?: boolean;
  /**
   * The 24.10 patch level to behave as: '24.10.5' (default) or '24.10.4', whose filtered `$all`
   * subscriptions could checkpoint at ulong.MaxValue (KDB-710).
   */
  readonly version?: ServerVersion;
  /** The server's MaxAppendSize in bytes (default 1 MiB, as EventStoreDB's). */
  readonly maxAppendSize?: number;
  /** The server's MaxAppendEventSize in bytes (default unlimited, as EventStoreDB's). */
  readonly maxAppendEventSize?: number;
  /**
   * A secure node (security.ts): TLS with a certificate from a throwaway test CA, and Basic
   * authentication of every Streams call. Default false: plaintext, no authentication.
   */
  readonly secure?: boolean;
  /** The users of a secure node (user → password). Default `{ admin: 'changeit' }`, as the node's. */
  readonly users?: Readonly<Record<string, string>>;
}

export interface EsdbTestServer {
  /**
   * `esdb://127.0.0.1:<port>?tls=false`; secure: `esdb://<first user>:<password>@localhost:<port>
   * ?tls=true&tlsCAFile=<caFile>`.
   */
  readonly connectionString: string;
  readonly port: number;
  /** The test CA's certificate (PEM file) of a secure node; undefined otherwise. */
  readonly caFile?: string;
  readonly dataDir: string;
  /**
   * Closes every client connection (HTTP/2 session) at once; open calls and subscriptions fail on
   * the client, which reconnects. The process and its in-memory state stay (unlike `restart`).
   */
  dropConnections(): Promise<void>;
  /** Calls per method, BatchAppend appends and chunks, since this process started. */
  stats(): Promise<ServerStats>;
  /**
   * Moves the server's clock on: event timestamps and `$maxAge` use it (BatchAppend deadlines,
   * absolute times from a client on this machine, still use the real one). Kept across restarts.
   */
  advanceClock(ms: number): Promise<void>;
  /** Every read (`Streams/Read`, subscriptions included) started from now on waits `ms` first; 0 undoes it. */
  setReadDelay(ms: number): Promise<void>;
  /**
   * Stops the server process and starts a new one on the same port and data: every open
   * connection, call and subscription drops, and in-memory state (the idempotency cache) is lost.
   * `SIGTERM` (default) lets the server force-close its calls (clients see CANCELLED);
   * `SIGKILL` is a crash (clients see the connection drop).
   */
  restart(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Stops the process and leaves it down until `start()`. */
  kill(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again after `kill()`, on the same port and data. */
  start(): Promise<void>;
  /** Stops the process for good; removes the data dir if the harness created it. */
  stop(): Promise<void>;
}

const REPO_ROOT = resolve(__dirname, '..', '..');
const SERVER_ENTRY = join(__dirname, 'server.ts');
const LISTENING_MARKER = 'ESDB_TEST_SERVER_LISTENING';
/** Guards against a hung start or control call, not test assertions: both take milliseconds. */
const START_TIMEOUT_MS = 20_000;
const CONTROL_TIMEOUT_MS = 10_000;

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

export async function startEsdbTestServer(options: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  installExitHook();
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'esdb-test-server-'));
  let child: ChildProcess | undefined;
  let port = options.port ?? 0;
  let clockOffsetMs = 0;
  let nextId = 1;
  const users = Object.entries(options.users ?? { admin: 'changeit' });
  const pki = options.secure ? makeTestPki('EventStoreDB test') : undefined;
  const removeOwned = () => {
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  };

  const launch = async () => {
    const args = [
      '--data-dir',
      dataDir,
      '--port',
      String(port),
      '--clock-offset-ms',
      String(clockOffsetMs),
      '--exit-with-stdin',
    ];
    if (options.serverFeatures === false) args.push('--no-server-features');
    if (options.version) args.push('--version', options.version);
    if (options.maxAppendSize !== undefined) args.push('--max-append-size', String(options.maxAppendSize));
    if (options.maxAppendEventSize !== undefined)
      args.push('--max-append-event-size', String(options.maxAppendEventSize));
    if (pki) {
      writeFileSync(join(pki.dir, 'node.crt'), pki.cert);
      writeFileSync(join(pki.dir, 'node.key'), pki.key);
      args.push('--tls-cert', join(pki.dir, 'node.crt'), '--tls-key', join(pki.dir, 'node.key'));
      args.push('--users', users.map(([user, password]) => `${user}:${password}`).join(','));
    }
    const started = await spawnServer(args);
    child = started.child;
    port = started.port;
  };
  const halt = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const c = child;
    child = undefined;
    if (c) await terminate(c, signal);
  };
  const control = (request: ControlOp): Promise<unknown> => {
    const c = child;
    if (!c?.connected) return Promise.reject(new Error('esdb-test-server is not running'));
    const id = nextId++;
    return new Promise((resolvePromise, reject) => {
      // The channel is unref'd between calls so it never keeps Jest alive; ref'd while waiting.
      c.channel?.ref();
      const done = () => {
        clearTimeout(timer);
        c.off('message', onMessage);
        c.off('exit', onExit);
        c.channel?.unref();
      };
      const onMessage = (reply: ControlReply) => {
        if (reply.id !== id) return;
        done();
        if (reply.error) reject(new Error(reply.error));
        else resolvePromise(reply.result);
      };
      const onExit = () => {
        done();
        reject(new Error(`esdb-test-server exited during ${request.op}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`esdb-test-server did not answer ${request.op} within ${CONTROL_TIMEOUT_MS} ms`));
      }, CONTROL_TIMEOUT_MS);
      c.on('message', onMessage);
      c.once('exit', onExit);
      c.send({ ...request, id });
    });
  };

  try {
    await launch();
  } catch (err) {
    removeOwned();
    throw err;
  }

  return {
    get connectionString() {
      if (!pki) return `esdb://127.0.0.1:${port}?tls=false`;
      const [user, password] = users[0];
      const auth = `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
      return `esdb://${auth}@localhost:${port}?tls=true&tlsCAFile=${pki.caFile}`;
    },
    caFile: pki?.caFile,
    get port() {
      return port;
    },
    dataDir,
    async dropConnections() {
      await control({ op: 'drop-connections' });
    },
    async stats() {
      return (await control({ op: 'stats' })) as ServerStats;
    },
    async advanceClock(ms) {
      clockOffsetMs = (await control({ op: 'advance-clock', ms })) as number;
    },
    async setReadDelay(ms) {
      await control({ op: 'set-read-delay', ms });
    },
    async restart(signal) {
      await halt(signal);
      await launch();
    },
    kill: halt,
    async start() {
      if (!child) await launch();
    },
    async stop() {
      await halt('SIGKILL');
      removeOwned();
    },
  };
}

function spawnServer(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', SERVER_ENTRY, ...args], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));

  return new Promise((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const timer = setTimeout(
      () => fail(new Error(`esdb-test-server did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\n${stderr}`.trim()));
    };
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (settled) return;
      stdout += chunk;
      const match = new RegExp(`${LISTENING_MARKER} (\\d+)`).exec(stdout);
      if (!match) return;
      settled = true;
      clearTimeout(timer);
      // From here on the child must not keep Jest (or a script) alive if someone forgets stop():
      // it dies with us anyway.
      child.unref();
      child.channel?.unref();
      for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void })?.unref?.();
      resolvePromise({ child, port: Number(match[1]) });
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      // Keep only the tail: enough to explain a failed start.
      stderr = (stderr + chunk).slice(-8_000);
    });
    child.stdin!.on('error', () => {}); // EPIPE when the child has gone
    child.once('error', (err) => fail(err));
    child.once('exit', (code, signal) =>
      fail(new Error(`esdb-test-server exited during start (code ${code}, signal ${signal})`)),
    );
  });
}

async function terminate(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  // SIGTERM makes the server force-close its calls and exit; if that ever hangs, insist.
  const insist = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(insist);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * Several service processes on one EventStoreDB test server, as `docker compose up` runs them:
 * each a child process (test/support/service-child.ts) with its own DATA_DIR, all with the same
 * environment otherwise. A test drives them round-robin, SIGKILLs one mid-load, restarts one.
 *
 *   const cluster = await startCluster({ size: 3, env, setup: async (service) => provisionAccount(service) });
 *   await api(cluster.next(), ...);            // the next live instance, in turn
 *   await cluster.instances[1].kill('SIGKILL');
 *   await cluster.stop();
 *
 * `setup` runs on an in-process instance on the same store before the children start (the
 * provisioning helpers need one), and that instance is closed before they start.
 */
import { createEventStore, type EventStore } from '@filing/event-store';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type EsdbTestServer, startEsdbTestServer } from '../esdb-test-server/harness';
import { LISTENING_MARKER } from './service-child';
import { startService, TEST_SECRETS_KEY, type TestService } from './service';
import { eventually } from './webhooks';

const REPO_ROOT = resolve(__dirname, '..', '..');
const CHILD = join(__dirname, 'service-child.ts');
/** A guard against a hung start, not an assertion: a start takes a few seconds on a loaded machine. */
const START_TIMEOUT_MS = 60_000;
const DISPATCHER_LOG = /Webhook dispatcher instance ([0-9a-f-]{36})/;

export interface ClusterInstance {
  readonly index: number;
  /** `http://127.0.0.1:<port>`; the port stays the same across restarts. */
  readonly url: string;
  readonly dataDir: string;
  /** The webhook dispatcher's instance id of the running process (its claims name it), from its log. */
  readonly dispatcherId: string;
  readonly alive: boolean;
  /** Stops the process (`SIGKILL`: a crash); the DATA_DIR stays. */
  kill(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and DATA_DIR (a new dispatcher id). */
  start(): Promise<void>;
  /** The last lines the process wrote (logs), for a failure message. */
  output(): string;
}

export interface Cluster<S = undefined> {
  readonly esdb: EsdbTestServer;
  readonly instances: readonly ClusterInstance[];
  /** What `setup` returned. */
  readonly setup: S;
  /** A client of the cluster's event store, for a test to read what the instances wrote (closed by `stop`). */
  store(): EventStore;
  /** The base URL of the next live instance, round-robin. */
  next(): string;
  /** Resolves once every live instance answers /readyz 200 (projections caught up with the head). */
  ready(): Promise<void>;
  /** Kills every instance and the store; removes every DATA_DIR. */
  stop(): Promise<void>;
}

export interface ClusterOptions<S> {
  readonly size?: number;
  /** Environment of every instance (and of the setup instance), beside the store's, DATA_DIR and SECRETS_KEY. */
  readonly env?: Record<string, string>;
  readonly setup?: (service: TestService) => Promise<S>;
  /**
   * The store as production runs it: TLS with a test CA and `admin`/`changeit` credentials
   * (`esdb://admin:changeit@localhost:<port>?tls=true&tlsCAFile=…`). Default false: plaintext.
   */
  readonly secure?: boolean;
}

export async function startCluster<S = undefined>(options: ClusterOptions<S> = {}): Promise<Cluster<S>> {
  const env = {
    EVENT_STORE: 'esdb',
    // The same on every instance, as in production; the one startService gives the setup instance.
    SECRETS_KEY: TEST_SECRETS_KEY,
    // Tests fire requests back to back; the limit has its own spec.
    API_RATE_LIMIT: '1000000/1s',
    ...options.env,
  };
  const esdb = await startEsdbTestServer({ secure: options.secure });
  const instances: Instance[] = [];
  try {
    let setup = undefined as S;
    if (options.setup) {
      const dataDir = mkdtempSync(join(tmpdir(), 'filing-cluster-setup-'));
      const service = await startService({ eventStore: 'esdb', env, reuse: { dataDir, esdb } });
      try {
        setup = await options.setup(service);
      } finally {
        await service.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
    for (let i = 0; i < (options.size ?? 3); i++)
      instances.push(new Instance(i, { ...env, EVENTSTORE_CONNECTION_STRING: esdb.connectionString }));
    await Promise.all(instances.map((i) => i.start()));
    let turn = 0;
    let store: EventStore | null = null;
    const cluster: Cluster<S> = {
      esdb,
      instances,
      setup,
      store() {
        store ??= createEventStore({ kind: 'esdb', connectionString: esdb.connectionString });
        return store;
      },
      next() {
        const live = instances.filter((i) => i.alive);
        if (live.length === 0) throw new Error('no instance of the cluster is running');
        return live[turn++ % live.length].url;
      },
      async ready() {
        await Promise.all(instances.filter((i) => i.alive).map((i) => waitReady(i.url)));
      },
      async stop() {
        await store?.close();
        await Promise.all(instances.map((i) => i.kill('SIGKILL')));
        for (const i of instances) rmSync(i.dataDir, { recursive: true, force: true });
        await esdb.stop();
      },
    };
    await cluster.ready();
    return cluster;
  } catch (err) {
    await Promise.all(instances.map((i) => i.kill('SIGKILL')));
    for (const i of instances) rmSync(i.dataDir, { recursive: true, force: true });
    await esdb.stop();
    throw err;
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

class Instance implements ClusterInstance {
  readonly dataDir = mkdtempSync(join(tmpdir(), 'filing-cluster-'));
  private child: ChildProcess | null = null;
  private port = 0;
  private id = '';
  private log = '';

  constructor(
    readonly index: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get dispatcherId(): string {
    return this.id;
  }

  get alive(): boolean {
    return this.child !== null;
  }

  output(): string {
    return this.log;
  }

  async start(): Promise<void> {
    if (this.child) return;
    // The markers of this start only: a restart logs a new dispatcher id.
    this.id = '';
    this.log = '';
    const child = spawn(process.execPath, ['-r', '@swc-node/register', CHILD], {
      cwd: REPO_ROOT,
      // info: the dispatcher's instance id is logged at start.
      env: { ...process.env, LOG_LEVEL: 'info', ...this.env, PORT: String(this.port), DATA_DIR: this.dataDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    child.stdin.on('error', () => {}); // EPIPE once it has gone
    this.child = child;
    await new Promise<void>((resolvePromise, reject) => {
      let settled = false;
      const timer = setTimeout(
        () => fail(new Error(`instance ${this.index} did not start within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        this.child = null;
        reject(new Error(`${err.message}\n${this.log}`));
      };
      let port: number | null = null;
      const take = (chunk: string) => {
        // Markers are read as they arrive (start-up logs can push them out of the kept tail);
        // only the tail is kept, enough to explain a failure.
        const window = this.log.slice(-200) + chunk;
        this.log = (this.log + chunk).slice(-16_000);
        this.id ||= DISPATCHER_LOG.exec(window)?.[1] ?? '';
        const listening = new RegExp(`${LISTENING_MARKER} (\\d+)`).exec(window);
        if (listening) port = Number(listening[1]);
        if (settled || port === null || !this.id) return;
        settled = true;
        clearTimeout(timer);
        this.port = port;
        resolvePromise();
      };
      child.stdout.setEncoding('utf8').on('data', take);
      child.stderr.setEncoding('utf8').on('data', take);
      child.once('error', fail);
      child.once('exit', (code, signal) =>
        fail(new Error(`instance ${this.index} exited during start (code ${code}, signal ${signal})`)),
      );
    });
  }

  async kill(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    await exited;
  }
}

export interface FailedStart {
  readonly exitCode: number | null;
  /** Everything the process wrote (stdout and stderr). */
  readonly output: string;
}

/**
 * Starts one service process with `env` (beside DATA_DIR, PORT and SECRETS_KEY) and resolves when
 * it exits; rejects if it starts listening instead, or is still running after `timeoutMs`.
 */
export async function startExpectingFailure(env: Record<string, string>, timeoutMs = 60_000): Promise<FailedStart> {
  const dataDir = mkdtempSync(join(tmpdir(), 'filing-failed-start-'));
  const child = spawn(process.execPath, ['-r', '@swc-node/register', CHILD], {
    cwd: REPO_ROOT,
    env: { ...process.env, SECRETS_KEY: TEST_SECRETS_KEY, ...env, PORT: '0', DATA_DIR: dataDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  child.stdin.on('error', () => {});
  let output = '';
  const take = (chunk: string) => (output += chunk);
  child.stdout.setEncoding('utf8').on('data', take);
  child.stderr.setEncoding('utf8').on('data', take);
  try {
    return await new Promise<FailedStart>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms:\n${output}`)), timeoutMs);
      child.stdout.on('data', () => {
        if (output.includes(LISTENING_MARKER)) reject(new Error(`started instead of failing:\n${output}`));
      });
      child.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolvePromise({ exitCode, output });
      });
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    live.delete(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function waitReady(base: string): Promise<void> {
  await eventually(async () => {
    try {
      return (await fetch(`${base}/readyz`)).status === 200 ? true : undefined;
    } catch {
      return undefined;
    }
  }, 100);
}

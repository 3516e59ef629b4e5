/**
 * Starts the whole service in-process on a free port, on a temp DATA_DIR, with either store.
 * With `eventStore: 'esdb'` the EventStoreDB test server runs in its own process beside it.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { auditReadModels, formatReadModelDifference, loadConfig, ProjectionRunner } from '@filing/platform';
import { createApp, type CreateAppOptions } from '../../apps/service/src/bootstrap';
import { type EsdbTestServer, startEsdbTestServer } from '../esdb-test-server/harness';

export interface TestService {
  readonly url: string;
  readonly app: NestFastifyApplication;
  readonly dataDir: string;
  readonly esdb?: EsdbTestServer;
  /** Closes the app; the data stays for a restart on it. */
  close(): Promise<void>;
  /**
   * Audits the read models against a rebuild from the stream (unless `audit: false`, for a spec
   * that damages them on purpose), then closes the app and removes everything it made. A
   * difference fails the spec: every e2e run leaves data that `audit` must pass on.
   */
  destroy(options?: { audit?: boolean }): Promise<void>;
}

export interface TestServiceOptions {
  readonly eventStore?: 'sqlite' | 'esdb';
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Reuse data (and the test server) of an earlier run, e.g. to test a restart; or only the test
   * server, for another instance beside a running one (its own DATA_DIR, the same SECRETS_KEY).
   */
  readonly reuse?: Partial<Pick<TestService, 'dataDir' | 'esdb'>>;
  /** Where the service logs (e.g. a stream a test reads back); LOG_LEVEL in `env` sets how much. */
  readonly logDestination?: CreateAppOptions['logDestination'];
  /** Extra modules, e.g. test/support/probe.module.ts. */
  readonly imports?: CreateAppOptions['imports'];
  /**
   * sqlite: how often the service looks for other processes' appends (default 250 ms). A spec
   * sets it long to show that something other than the poll makes another process's write seen.
   */
  readonly sqlitePollIntervalMs?: number;
}

/** One SECRETS_KEY for every esdb service of this test process: restarts and instances side by side share it. */
export const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

/** Services running on each test server: the last one destroyed stops it. */
const esdbUsers = new Map<EsdbTestServer, number>();

export async function startService(options: TestServiceOptions = {}): Promise<TestService> {
  const kind = options.eventStore ?? 'sqlite';
  const dataDir = options.reuse?.dataDir ?? mkdtempSync(join(tmpdir(), 'filing-e2e-'));
  const esdb = kind === 'esdb' ? (options.reuse?.esdb ?? (await startEsdbTestServer())) : undefined;
  if (esdb) esdbUsers.set(esdb, (esdbUsers.get(esdb) ?? 0) + 1);
  const loaded = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // Specs fire requests back to back; the limit itself has its own spec (rate-limit.e2e).
    API_RATE_LIMIT: '1000000/1s',
    EVENT_STORE: kind,
    ...(esdb ? { EVENTSTORE_CONNECTION_STRING: esdb.connectionString, SECRETS_KEY: TEST_SECRETS_KEY } : {}),
    ...options.env,
  });
  // Read by createEventStore for sqlite (EventStoreConfig.pollIntervalMs); not an AppConfig field.
  const config =
    options.sqlitePollIntervalMs === undefined
      ? loaded
      : {
          ...loaded,
          eventStore: Object.assign({}, loaded.eventStore, { pollIntervalMs: options.sqlitePollIntervalMs }),
        };
  const app = await createApp(config, { logDestination: options.logDestination, imports: options.imports });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = await app.getUrl();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (esdb) esdbUsers.set(esdb, esdbUsers.get(esdb)! - 1);
    await app.close();
  };
  return {
    url: url.replace('[::1]', '127.0.0.1'),
    app,
    dataDir,
    esdb,
    close,
    async destroy({ audit = true } = {}) {
      try {
        if (audit && !closed) await expectAuditPasses(app, dataDir);
      } finally {
        await close();
        if (esdb && esdbUsers.get(esdb) === 0) {
          esdbUsers.delete(esdb);
          await esdb.stop();
        }
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** What `npm run cli -- audit` does, on a running service: its live read models equal a rebuild. */
export async function expectAuditPasses(app: NestFastifyApplication, dataDir: string): Promise<void> {
  const runner = app.get(ProjectionRunner);
  const report = await auditReadModels({
    dataDir,
    store: app.get<EventStore>(EVENT_STORE),
    projections: runner.registered,
  });
  if (report.differences.length > 0) {
    const shown = report.differences.slice(0, 10).map(formatReadModelDifference).join('');
    throw new Error(`audit of ${dataDir} failed: ${report.differences.length} rows differ from a rebuild\n${shown}`);
  }
}

import { SqliteEventStore, type Position, type SubscriptionMessage } from '@filing/event-store';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMetadata, toEventData } from '../events/envelope';
import type { Projection } from './projection';
import { ProjectionFailedError, ProjectionRunner } from './projection-runner';
import { appendProcessorRecord, ProcessorRecords } from '../processors/processor-records';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };

/**
 * Sums `test.Added` per stream. `counter_log` has the event id as primary key, so applying an
 * event twice would throw instead of passing unnoticed. `test.Boom` writes a row, then throws
 * while `failing.on` is set.
 */
function counter(version = 1, failing: { on: boolean; times?: number } = { on: true }): Projection {
  return {
    name: 'counter',
    version,
    tables: ['counter_totals', 'counter_log'],
    handles: ['test.'],
    setup(db) {
      db.exec(`CREATE TABLE IF NOT EXISTS counter_totals (stream TEXT PRIMARY KEY, total INTEGER NOT NULL);
               CREATE TABLE IF NOT EXISTS counter_log (event_id TEXT PRIMARY KEY)`);
    },
    apply(db, event) {
      db.prepare('INSERT INTO counter_log (event_id) VALUES (?)').run(event.id);
      if (event.type === 'test.Boom' && failing.on) {
        // `times`: fail that many times, then pass (a transient failure such as SQLITE_BUSY).
        if (failing.times !== undefined && --failing.times <= 0) failing.on = false;
        throw new Error('boom');
      }
      const n = event.type === 'test.Added' ? Number(event.data.n) : 0;
      db.prepare(
        `INSERT INTO counter_totals (stream, total) VALUES (?, ?)
         ON CONFLICT (stream) DO UPDATE SET total = total + excluded.total`,
      ).run(event.streamId, n);
    },
  };
}

/** Handles nothing: must still advance, or read-your-writes would wait on it. */
const idle: Projection = {
  name: 'idle',
  version: 1,
  tables: [],
  handles: () => false,
  setup() {},
  apply() {
    throw new Error('never called');
  },
};

const totals = (db: Database.Database) =>
  Object.fromEntries(
    db
      .prepare<[], { stream: string; total: number }>('SELECT stream, total FROM counter_totals')
      .all()
      .map((r) => [r.stream, r.total]),
  );
const logCount = (db: Database.Database) =>
  db.prepare<[], { n: number }>('SELECT count(*) AS n FROM counter_log').get()!.n;
const checkpoint = (db: Database.Database, name: string) =>
  db
    .prepare<[string], { position: string | null; version: number }>(
      'SELECT position, version FROM projection_checkpoints WHERE name = ?',
    )
    .get(name);

describe('ProjectionRunner', () => {
  let dir: string;
  let store: SqliteEventStore;
  let readFile: string;
  const runners: ProjectionRunner[] = [];
  const logger = { log: jest.fn(), error: jest.fn(), warn: jest.fn() };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'projections-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    readFile = join(dir, 'read.db');
    logger.log.mockClear();
    logger.error.mockClear();
    logger.warn.mockClear();
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function runner(...projections: Projection[]): ProjectionRunner {
    const r = new ProjectionRunner({ store, file: readFile, projections, logger, backoff: { minMs: 5, maxMs: 20 } });
    runners.push(r);
    return r;
  }

  async function append(stream: string, ...events: Array<[type: string, n?: number]>): Promise<Position> {
    const data = events.map(([type, n = 0]) => toEventData({ type, data: { n } }, buildMetadata(context)));
    return (await store.appendToStream(stream, data)).position;
  }

  it('applies live events and resolves waitFor once every projection has them', async () => {
    const r = runner(counter(), idle);
    await r.start();
    expect(await r.isCaughtUp()).toBe(true);
    const p1 = await append('counter-a', ['test.Added', 2]);
    const p2 = await append('counter-b', ['test.Added', 3], ['test.Added', 4]);
    expect(await r.waitFor(p2, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-a': 2, 'counter-b': 7 });
    expect(await r.waitFor(p1, 5000)).toBe(true);
    expect(r.position()).toEqual(p2);
    expect(await r.isCaughtUp()).toBe(true);
    expect(checkpoint(r.db, 'counter')?.position).toBe(`${p2.commit}/${p2.prepare}`);
  });

  it('advances every checkpoint on events no projection handles', async () => {
    const r = runner(counter(), idle);
    await r.start();
    const p = await append('other-1', ['other.Thing']);
    expect(await r.waitFor(p, 5000)).toBe(true);
    expect(checkpoint(r.db, 'idle')?.position).toBe(`${p.commit}/${p.prepare}`);
    expect(checkpoint(r.db, 'counter')?.position).toBe(`${p.commit}/${p.prepare}`);
    expect(logCount(r.db)).toBe(0);
  });

  it('calls afterCommit once the batch is committed: its rows are visible from another connection', async () => {
    const seen: Array<Record<string, number>> = [];
    const r = runner({
      ...counter(),
      afterCommit() {
        const other = new Database(readFile, { readonly: true });
        try {
          seen.push(totals(other));
        } finally {
          other.close();
        }
      },
    });
    await r.start();
    const p = await append('counter-a', ['test.Added', 5]);
    expect(await r.waitFor(p, 5000)).toBe(true);
    expect(seen.at(-1)).toEqual({ 'counter-a': 5 });
  });

  it('waitFor answers null at once and false at the timeout', async () => {
    const r = runner(counter());
    await r.start();
    await expect(r.waitFor(null, 10)).resolves.toBe(true);
    const beyond: Position = { commit: 1000n, prepare: 1000n };
    await expect(r.waitFor(beyond, 20)).resolves.toBe(false);
  });

  it('catches up from its checkpoint after a restart, applying nothing twice', async () => {
    const first = runner(counter(), idle);
    await first.start();
    const p = await append('counter-a', ['test.Added', 1], ['test.Added', 2]);
    expect(await first.waitFor(p, 5000)).toBe(true);
    // A row the projection never writes: a restart at the same version must keep the tables.
    first.db.prepare("INSERT INTO counter_totals VALUES ('marker', 0)").run();
    await first.close();

    await append('counter-a', ['test.Added', 10]);
    const head = await append('counter-b', ['test.Added', 20]);
    const second = runner(counter(), idle);
    await second.start();
    expect(second.position()).toEqual(p); // read from the checkpoint table
    expect(await second.waitFor(head, 5000)).toBe(true);
    expect(totals(second.db)).toEqual({ 'counter-a': 13, 'counter-b': 20, marker: 0 });
    expect(logCount(second.db)).toBe(4);
  });

  it('rebuilds a projection from scratch when its version changes', async () => {
    const first = runner(counter(1));
    await first.start();
    const p = await append('counter-a', ['test.Added', 5], ['test.Added', 6]);
    expect(await first.waitFor(p, 5000)).toBe(true);
    first.db.prepare("INSERT INTO counter_totals VALUES ('marker', 0)").run();
    await first.close();

    const second = runner(counter(2));
    await second.start();
    expect(second.position()).toBeNull();
    expect(await second.waitFor(p, 5000)).toBe(true);
    expect(totals(second.db)).toEqual({ 'counter-a': 11 });
    expect(logCount(second.db)).toBe(2);
    expect(checkpoint(second.db, 'counter')?.version).toBe(2);
    expect(logger.log).toHaveBeenCalledWith(expect.stringContaining('rebuilding'));
  });

  it('drops a superseded projection (tables, checkpoint) and rebuilds the one replacing it', async () => {
    // Before: `counter` and `tally`, whose rows `counter` now keeps in a table named as `tally`'s.
    const tally: Projection = {
      ...counter(),
      name: 'tally',
      tables: ['tally_rows', 'tally_extra'],
      setup(db) {
        db.exec(
          'CREATE TABLE IF NOT EXISTS tally_rows (n INTEGER); CREATE TABLE IF NOT EXISTS tally_extra (n INTEGER)',
        );
      },
      apply(db) {
        db.prepare('INSERT INTO tally_rows VALUES (1)').run();
      },
    };
    const first = runner(counter(), tally);
    await first.start();
    const p = await append('counter-a', ['test.Added', 5]);
    expect(await first.waitFor(p, 5000)).toBe(true);
    first.db.prepare("INSERT INTO counter_totals VALUES ('marker', 0)").run();
    await first.close();

    const successor: Projection = {
      ...counter(),
      tables: ['counter_totals', 'counter_log', 'tally_rows'],
      supersedes: [{ name: 'tally', tables: tally.tables }],
      setup(db) {
        counter().setup(db);
        db.exec('CREATE TABLE IF NOT EXISTS tally_rows (n INTEGER)');
      },
    };
    const second = runner(successor);
    await second.start();
    expect(await second.waitFor(p, 5000)).toBe(true);
    expect(totals(second.db)).toEqual({ 'counter-a': 5 });
    expect(checkpoint(second.db, 'tally')).toBeUndefined();
    const tables = second.db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'tally%'")
      .all();
    expect(tables).toEqual([{ name: 'tally_rows' }]);
    expect(second.db.prepare('SELECT count(*) AS n FROM tally_rows').get()).toEqual({ n: 0 });
    expect(logger.log).toHaveBeenCalledWith(expect.stringContaining('supersedes tally, rebuilding'));
    await second.close();

    // Once retired, a start rebuilds nothing.
    logger.log.mockClear();
    const third = runner(successor);
    await third.start();
    expect(await third.waitFor(p, 5000)).toBe(true);
    expect(logger.log).not.toHaveBeenCalledWith(expect.stringContaining('rebuilding'));
    expect(() => runner(successor, tally)).toThrow('Projection tally is registered and superseded');
  });

  it('rebuild() drops every table and checkpoint and replays the stream', async () => {
    const r = runner(counter(), idle);
    await r.start();
    await append('counter-a', ['test.Added', 1]);
    const p = await append('counter-a', ['test.Added', 2]);
    expect(await r.waitFor(p, 5000)).toBe(true);
    r.db.prepare("INSERT INTO counter_totals VALUES ('marker', 0)").run();

    await r.rebuild();
    expect(await r.waitFor(p, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-a': 3 });
    expect(logCount(r.db)).toBe(2);
    const later = await append('counter-a', ['test.Added', 4]);
    expect(await r.waitFor(later, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-a': 7 });
  });

  it('a transient failure rolls the batch back and passes on restart from the checkpoint', async () => {
    const failing = { on: true, times: 2 };
    // Appended together, so they arrive together and share one transaction.
    const boom = await append('counter-a', ['test.Added', 1], ['test.Added', 2], ['test.Boom']);
    const r = runner(counter(1, failing), idle);
    await r.start();
    expect(await r.waitFor(boom, 5000)).toBe(true);
    // Applied exactly once despite two rolled-back attempts (counter_log would refuse a repeat).
    expect(totals(r.db)).toEqual({ 'counter-a': 3 });
    expect(logCount(r.db)).toBe(3);
    expect(await r.isCaughtUp()).toBe(true);
    expect(r.statuses().find((s) => s.name === 'projection:counter')).toMatchObject({ state: 'running', restarts: 2 });
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('projection counter failed on event'));
  });

  it('halts a projection that keeps failing on one event; the others go on; a restart after the fix resumes', async () => {
    const failing = { on: true };
    const before = await append('counter-a', ['test.Added', 1]);
    const boom = await append('counter-a', ['test.Boom']);
    const r = runner(counter(1, failing), idle);
    await r.start();
    const after = await append('counter-a', ['test.Added', 5]);
    // Writers are not held up by a halted projection: `idle` reaches the later write.
    expect(await r.waitFor(after, 5000)).toBe(true);
    expect(checkpoint(r.db, 'idle')?.position).toBe(`${after.commit}/${after.prepare}`);
    expect(checkpoint(r.db, 'counter')?.position).toBe(`${before.commit}/${before.prepare}`);
    expect(totals(r.db)).toEqual({ 'counter-a': 1 });
    expect(await r.isCaughtUp()).toBe(false);
    const status = r.statuses().find((s) => s.name === 'projection:counter')!;
    expect(status.state).toBe('halted');
    expect(status.halted).toMatchObject({ eventType: 'test.Boom', streamId: 'counter-a', error: 'boom' });
    expect(r.statuses().find((s) => s.name === 'projection:idle')!.state).toBe('running');
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringMatching(/Projection counter HALTED on event .* \(test\.Boom\) in stream counter-a: boom/),
    );

    // Fixed (e.g. by a deploy): a restart resumes counter from its untouched checkpoint.
    failing.on = false;
    await r.stop();
    await r.start();
    expect(await r.waitFor(after, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-a': 6 });
    expect(await r.isCaughtUp()).toBe(true);
    expect(boom.commit).toBe(before.commit + 1n);
  });

  it('an event an operator skipped (recorded) lets a halted projection resume, missing nothing after it', async () => {
    await append('counter-a', ['test.Added', 1]);
    const boom = await append('counter-a', ['test.Boom']);
    const r = runner(counter(1, { on: true }), idle);
    await r.start();
    const during = await append('counter-a', ['test.Added', 5]);
    expect(await r.waitFor(during, 5000)).toBe(true);
    expect(r.haltedProjections()).toEqual([expect.objectContaining({ projection: 'counter', eventType: 'test.Boom' })]);
    const [boomEvent] = await store.readAll({ from: boom, maxCount: 1 });
    await appendProcessorRecord(
      store,
      'projection:counter',
      {
        id: '0193a5b2-0000-7000-8000-0000000000aa',
        type: ProcessorRecords.EventSkipped,
        data: { processor: 'projection:counter', event_id: boomEvent.id },
      },
      'operator:test',
    );
    const after = await append('counter-a', ['test.Added', 2]);
    // Waits for counter too: back in service from the batch that brought the record.
    expect(await r.waitFor(after, 5000)).toBe(true);
    // Everything but the skipped event: 1 + 5 + 2, the 5 written while it was halted included.
    expect(r.haltedProjections()).toEqual([]);
    expect(totals(r.db)).toEqual({ 'counter-a': 8 });
    expect(await r.isCaughtUp()).toBe(true);
    // A rebuild reads the record first and skips the event alike.
    await r.rebuild();
    expect(await r.waitFor(after, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-a': 8 });
  });

  it('with isolation off (rebuilds, audits) stops at the first failure and reports it', async () => {
    const boom = await append('counter-a', ['test.Added', 1], ['test.Added', 2], ['test.Boom']);
    const r = new ProjectionRunner({
      store,
      file: readFile,
      projections: [counter(), idle],
      logger,
      isolateFailures: false,
    });
    runners.push(r);
    await r.start();
    expect(await r.waitFor(boom, 5000)).toBe(false); // released at once by the failure
    // Everything before the failing event is committed; nothing from it on.
    expect(totals(r.db)).toEqual({ 'counter-a': 3 });
    expect(logCount(r.db)).toBe(2);
    expect(checkpoint(r.db, 'counter')?.position).toBe(`${boom.commit - 1n}/${boom.prepare - 1n}`);
    expect(r.lastError).toBeInstanceOf(ProjectionFailedError);
    expect(r.lastError).toMatchObject({ projection: 'counter', event: { position: boom } });
  });

  it('keeps what came before a failing event, in earlier batches and in its own', async () => {
    const r = runner(counter());
    await r.start();
    const first = await append('counter-a', ['test.Added', 1]);
    expect(await r.waitFor(first, 5000)).toBe(true);
    const boom = await append('counter-a', ['test.Added', 2], ['test.Boom']);
    await new Promise((res) => setTimeout(res, 300));
    const beforeBoom = { commit: boom.commit - 1n, prepare: boom.prepare - 1n };
    expect(totals(r.db)).toEqual({ 'counter-a': 3 });
    expect(checkpoint(r.db, 'counter')?.position).toBe(`${beforeBoom.commit}/${beforeBoom.prepare}`);
    expect(r.position()).toEqual(beforeBoom);
    expect(first).toBeDefined();
  });

  it('advances checkpoints on checkpoint messages', async () => {
    const at: Position = { commit: 42n, prepare: 42n };
    jest.spyOn(store, 'subscribeToAll').mockImplementation(() => {
      let stopped!: () => void;
      const stop = new Promise<void>((r) => (stopped = r));
      async function* messages(): AsyncGenerator<SubscriptionMessage> {
        yield { kind: 'caught-up' };
        yield { kind: 'checkpoint', position: at };
        await stop;
      }
      const it = messages();
      return { [Symbol.asyncIterator]: () => it, stop: async () => stopped() };
    });
    const r = runner(counter(), idle);
    await r.start();
    expect(await r.waitFor(at, 5000)).toBe(true);
    expect(r.position()).toEqual(at);
    expect(checkpoint(r.db, 'idle')?.position).toBe('42/42');
  });

  it('catches up a backlog longer than one batch', async () => {
    for (let i = 0; i < 7; i++) await append(`counter-${i % 2}`, ['test.Added', i]);
    const head = await append('other-1', ['other.Thing']);
    const r = new ProjectionRunner({ store, file: readFile, projections: [counter(), idle], logger, maxBatch: 3 });
    runners.push(r);
    await r.start();
    expect(await r.waitFor(head, 5000)).toBe(true);
    expect(totals(r.db)).toEqual({ 'counter-0': 0 + 2 + 4 + 6, 'counter-1': 1 + 3 + 5 });
    expect(logCount(r.db)).toBe(7);
  });

  it('refuses two projections with one name', () => {
    expect(() => runner(counter(), counter())).toThrow(/Duplicate projection name counter/);
  });
});

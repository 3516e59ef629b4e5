import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ANY } from '../event-store.port';
import { threadNames } from '../../../../test/support/thread-names';
import { EventStoreUnavailableError } from '../errors';
import { SqliteEventStore } from './sqlite-event-store';
import { openEventsDatabase, SqliteWriter, type WriteRequest } from './sqlite-writer';
import { WrongExpectedVersionError } from '../errors';
import {
  decodeFailure,
  encodeFailure,
  packOutcomes,
  packRequests,
  unpackOutcomes,
  unpackRequests,
} from './writer-thread';

const ev = () => ({ id: randomUUID(), type: 't.A', data: { x: 1 } });

/** The writer thread behind a store (private: the failure cases need to kill it). */
const threadOf = (store: SqliteEventStore) => (store as unknown as { writer: { worker: Worker | null } }).writer.worker;

describe('SqliteEventStore writer thread', () => {
  let dir: string;
  let store: SqliteEventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-writer-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    await store.ready();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs as a thread named store-writer (top -H, perf)', () => {
    expect(threadNames() ?? ['store-writer']).toContain('store-writer');
  });

  it('rejects the appends it had not answered when the thread dies, acknowledges none, and starts a new one', async () => {
    const worker = threadOf(store)!;
    const pending = Array.from({ length: 20 }, (_, i) =>
      store.appendToStream(`s-${i}`, [ev()]).catch((e: unknown) => e),
    );
    // Sent on the next turn of the loop; the thread is stopped while they are under way.
    await new Promise((resolve) => setImmediate(resolve));
    await worker.terminate();
    const outcomes = await Promise.all(pending);
    for (const outcome of outcomes) {
      // Either committed before the thread stopped (and answered), or refused: never a silent loss.
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(EventStoreUnavailableError);
        expect(outcome.message).toMatch(/outcome of these appends is unknown/);
      } else {
        expect(outcome).toMatchObject({ nextExpectedRevision: 0n });
      }
    }
    expect(outcomes.some((o) => o instanceof EventStoreUnavailableError)).toBe(true);
    // Every acknowledged append is in the log.
    for (const [i, outcome] of outcomes.entries()) {
      if (!(outcome instanceof Error)) expect(await store.readStream(`s-${i}`)).toHaveLength(1);
    }

    // The next append starts a new thread and is committed.
    const r = await store.appendToStream('after', [ev()]);
    expect(r.nextExpectedRevision).toBe(0n);
    expect(threadOf(store)).not.toBe(worker);
    expect(await store.readStream('after')).toHaveLength(1);
  });

  it("commits a burst of appends far larger than the thread's young generation", async () => {
    // Near the API's body limit each: the writer's small young generation must not cap what a batch carries.
    const blob = (i: number) => `${i}`.padEnd(12 * 1024 * 1024, 'x');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.appendToStream(`big-${i}`, [{ id: randomUUID(), type: 't.Big', data: { blob: blob(i) } }]),
      ),
    );
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(Array(6).fill(0n));
    for (let i = 0; i < 6; i++) {
      const [read] = await store.readStream(`big-${i}`);
      expect((read.data as { blob: string }).blob === blob(i)).toBe(true);
    }
  });

  it('a commit that fails answers every request of its transaction with EventStoreUnavailableError, writing nothing', () => {
    // A deferred foreign key is checked at COMMIT only: a poisoned event makes the commit itself fail.
    const db = openEventsDatabase(join(dir, 'poisoned.db'));
    db.pragma('foreign_keys = ON');
    db.exec(`CREATE TABLE parent (id TEXT PRIMARY KEY);
      CREATE TABLE child (pid TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER poison AFTER INSERT ON events WHEN new.type = 't.Poison' BEGIN INSERT INTO child VALUES ('none'); END;`);
    const writer = new SqliteWriter(db, 1000);
    const append = (streamId: string, type: string): WriteRequest => ({
      op: 'append',
      streamId,
      expected: ANY,
      events: [{ id: randomUUID(), type, data: '{}', metadata: '{}' }],
    });
    const outcomes = writer.commit([append('fine', 't.A'), append('poisoned', 't.Poison')]);
    expect(outcomes).toHaveLength(2);
    for (const outcome of outcomes) {
      expect(outcome.ok).toBe(false);
      const failure = outcome as Extract<typeof outcome, { ok: false }>;
      expect(failure.error).toBeInstanceOf(EventStoreUnavailableError);
      // It crosses the thread boundary as what it is.
      expect(decodeFailure(encodeFailure(failure)).ok).toBe(false);
      expect(decodeFailure(encodeFailure(failure)).error).toBeInstanceOf(EventStoreUnavailableError);
    }
    expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 0n });
    // The next transaction without the poison commits.
    expect(writer.commit([append('fine', 't.A')])[0].ok).toBe(true);
    db.close();
  });

  it('an append overlapping ids already in its stream in part writes nothing (a conflict)', () => {
    const db = openEventsDatabase(':memory:');
    const writer = new SqliteWriter(db, 1000);
    const event = () => ({ id: randomUUID(), type: 't.A', data: '{}', metadata: '{}' });
    const append = (events: ReturnType<typeof event>[]): WriteRequest => ({
      op: 'append',
      streamId: 's',
      expected: ANY,
      events,
    });
    const [a, b] = [event(), event()];
    expect(writer.commit([append([a, b])])[0].ok).toBe(true);
    // The whole run again: acknowledged, nothing written.
    expect(writer.commit([append([a, b])])[0]).toMatchObject({ ok: true, result: { nextExpectedRevision: 1n } });
    // A known first id then a new one; a new first id then a known one: each a conflict.
    for (const events of [
      [a, event()],
      [event(), b],
    ]) {
      const [outcome] = writer.commit([append(events)]);
      expect(outcome.ok).toBe(false);
      expect((outcome as Extract<typeof outcome, { ok: false }>).error).toBeInstanceOf(WrongExpectedVersionError);
    }
    expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 2n });
    db.close();
  });

  it('requests and outcomes cross the thread boundary as they were, in order', () => {
    const requests: WriteRequest[] = [
      {
        op: 'append',
        streamId: 'a-1',
        expected: 'no_stream',
        events: [{ id: 'e1', type: 't.A', data: '{"x":"ü😀"}', metadata: '{}' }],
      },
      { op: 'metadata', streamId: 'a-2', metadata: { maxCount: 3, truncateBefore: 7n } },
      {
        op: 'append',
        streamId: 'a-3',
        expected: 41n,
        events: [
          { id: 'e2', type: 't.B', data: '{}', metadata: '{"m":1}' },
          { id: 'e3', type: 't.C', data: '[]', metadata: '{"m":2}' },
        ],
      },
      { op: 'delete', streamId: 'a-4' },
      { op: 'append', streamId: 'a-5', expected: ANY, events: [] },
    ];
    // structuredClone: what postMessage does to them.
    expect(unpackRequests(structuredClone(packRequests(requests)))).toEqual(requests);

    const position = (n: bigint) => ({ commit: n, prepare: n });
    const outcomes = [
      {
        ok: true,
        result: { nextExpectedRevision: 0n, position: position(10n) },
        appended: { first: 10n, created: 1_700_000_000_123 },
      },
      { ok: true },
      { ok: false, error: new WrongExpectedVersionError('a-3', 41n, 'no_stream') },
      { ok: true, result: { nextExpectedRevision: 1n, position: position(12n) } },
    ] as const;
    const back = unpackOutcomes(structuredClone(packOutcomes(outcomes)));
    expect(back).toHaveLength(4);
    expect(back[0]).toEqual(outcomes[0]);
    expect(back[1]).toEqual(outcomes[1]);
    expect((back[2] as { error: unknown }).error).toBeInstanceOf(WrongExpectedVersionError);
    expect((back[2] as { error: WrongExpectedVersionError }).error).toMatchObject({
      streamId: 'a-3',
      expected: 41n,
      actual: 'no_stream',
    });
    expect(back[3]).toEqual(outcomes[3]);
    expect(back[3]).not.toHaveProperty('appended');
  });

  it('close() commits and answers what was queued, then refuses new appends', async () => {
    const queued = Array.from({ length: 50 }, () => store.appendToStream('q', [ev()]).then((r) => r.position));
    await store.close();
    expect(await Promise.all(queued)).toHaveLength(50);
    await expect(store.appendToStream('q', [ev()])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    const reopened = new SqliteEventStore({ file: join(dir, 'events.db') });
    expect(await reopened.readStream('q')).toHaveLength(50);
    await reopened.close();
    store = new SqliteEventStore({ file: ':memory:' }); // for afterEach
  });

  // In a process with nothing else to do, a close() that races the thread's boot used to let the
  // boot unref the thread: the event loop emptied and the process exited inside `await close()`.
  it('a store closed while its thread is still booting keeps the process alive until it has closed', () => {
    const script = `
      const { SqliteEventStore } = require(${JSON.stringify(join(__dirname, 'sqlite-event-store'))});
      const store = new SqliteEventStore({ file: ${JSON.stringify(join(dir, 'booting.db'))} });
      store.close().then(() => console.log('closed'));
    `;
    const out = execFileSync(process.execPath, ['-r', '@swc-node/register', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(out).toContain('closed');
  });
});

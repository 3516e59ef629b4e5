import { SqliteEventStore, WrongExpectedVersionError } from '@filing/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, PreconditionFailedError } from '../errors/domain-errors';
import { buildMetadata, toEventData, type CommandContext, type DomainEvent } from '../events/envelope';
import { handleCommand, type HandleCommandOptions } from './handle-command';

// A tiny aggregate: a counter that can be added to until it is closed.
type Added = DomainEvent<'test.Added', { n: number }>;
type Closed = DomainEvent<'test.Closed', { reason: string }>;
type CounterEvent = Added | Closed;
interface Counter {
  total: number;
  status: 'open' | 'closed';
}
type Command = { kind: 'add'; n: number } | { kind: 'close' } | { kind: 'add-twice'; n: number } | { kind: 'noop' };

const evolve = (s: Counter, e: CounterEvent): Counter =>
  e.type === 'test.Added' ? { ...s, total: s.total + e.data.n } : { ...s, status: 'closed' };

function decide(s: Counter, c: Command): CounterEvent[] {
  if (c.kind === 'noop') return [];
  if (s.status === 'closed') throw ConflictError.invalidTransition('counter', c.kind, s.status);
  if (c.kind === 'close') return [{ type: 'test.Closed', data: { reason: 'done' } }];
  const added: Added = { type: 'test.Added', data: { n: c.n } };
  return c.kind === 'add' ? [added] : [added, added];
}

const context: CommandContext = {
  account_id: 'acc',
  actor: 'user:u1',
  correlation_id: 'corr-1',
  causation_id: 'cause-1',
};

describe('handleCommand', () => {
  let dir: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'handle-command-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (command: Command, extra: Partial<HandleCommandOptions<Counter, CounterEvent, Command>> = {}) =>
    handleCommand<Counter, CounterEvent, Command>({
      store,
      streamId: 'counter-1',
      initialState: { total: 0, status: 'open' },
      evolve,
      decide,
      command,
      context,
      ...extra,
    });

  it('appends to a new stream and returns position, revision, envelopes and state', async () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    const result = await run({ kind: 'add', n: 5 }, { now: () => now, schemaVersion: () => 3 });
    expect(result.nextExpectedRevision).toBe(0n);
    expect(result.position).toEqual(await store.headPosition());
    expect(result.state).toEqual({ total: 5, status: 'open' });
    expect(result.events).toHaveLength(1);
    expect(result.events[0]).toMatchObject({
      type: 'test.Added',
      data: { n: 5 },
      streamId: 'counter-1',
      revision: 0n,
      position: result.position,
      metadata: { ...buildMetadata(context, now, 3) },
    });
    const [stored] = await store.readStream('counter-1');
    expect(stored.id).toBe(result.events[0].id);
    expect(stored.metadata).toEqual(buildMetadata(context, now, 3));
  });

  it('decides a new stream without reading it, and appends it as a new stream', async () => {
    const read = jest.spyOn(store, 'readStream');
    const result = await run({ kind: 'add', n: 5 }, { newStream: true });
    expect(read).not.toHaveBeenCalled();
    expect(result.nextExpectedRevision).toBe(0n);
    expect(result.state).toEqual({ total: 5, status: 'open' });
    expect((await store.readStream('counter-1')).map((e) => e.data)).toEqual([{ n: 5 }]);
  });

  it('decides a "new" stream that exists after all on what it holds, never appending blind', async () => {
    await run({ kind: 'close' });
    const append = jest.spyOn(store, 'appendToStream');
    await expect(run({ kind: 'add', n: 5 }, { newStream: true })).rejects.toBeInstanceOf(ConflictError);
    expect(append).toHaveBeenCalledTimes(1); // expected no stream, refused; then reloaded and decided
    expect((await store.readStream('counter-1')).map((e) => e.type)).toEqual(['test.Closed']);
  });

  it('reads back the positions of several events appended together', async () => {
    await run({ kind: 'add', n: 1 });
    const result = await run({ kind: 'add-twice', n: 2 });
    expect(result.events.map((e) => e.revision)).toEqual([1n, 2n]);
    expect(result.events[1].position).toEqual(result.position);
    expect(result.events[0].position.commit).toBeLessThan(result.events[1].position.commit);
    expect(result.state.total).toBe(5);
    expect(result.nextExpectedRevision).toBe(2n);
  });

  it('reloads and retries on a concurrent write, so both commands succeed', async () => {
    await run({ kind: 'add', n: 1 });
    // Hold both loads until both have read the stream: their appends must conflict.
    const read = store.readStream.bind(store);
    let release!: () => void;
    const bothRead = new Promise<void>((r) => (release = r));
    let reads = 0;
    jest.spyOn(store, 'readStream').mockImplementation(async (...args) => {
      const events = await read(...args);
      if (++reads === 2) release();
      if (reads <= 2) await bothRead;
      return events;
    });
    const append = jest.spyOn(store, 'appendToStream');

    const [a, b] = await Promise.all([run({ kind: 'add', n: 10 }), run({ kind: 'add', n: 100 })]);
    expect(append).toHaveBeenCalledTimes(3); // one of the first two conflicted, then retried
    expect([a.nextExpectedRevision, b.nextExpectedRevision].sort()).toEqual([1n, 2n]);
    expect(Math.max(a.state.total, b.state.total)).toBe(111);
    expect((await store.readStream('counter-1')).map((e) => e.data.n)).toHaveLength(3);
  });

  it('gives up after maxRetries and rethrows the conflict', async () => {
    await run({ kind: 'add', n: 1 });
    // Another writer slips an event in after every load.
    const read = store.readStream.bind(store);
    let racer = 0;
    const rival = () => toEventData({ type: 'test.Added', data: { n: 0 } }, buildMetadata(context));
    jest.spyOn(store, 'readStream').mockImplementation(async (...args) => {
      const events = await read(...args);
      racer++;
      await store.appendToStream('counter-1', [rival()]);
      return events;
    });
    await expect(run({ kind: 'add', n: 5 }, { maxRetries: 2 })).rejects.toBeInstanceOf(WrongExpectedVersionError);
    expect(racer).toBe(3);
    const events = await read('counter-1');
    expect(events.filter((e) => e.data.n === 5)).toHaveLength(0);
  });

  it('appends nothing when decide returns no events', async () => {
    await run({ kind: 'add', n: 1 });
    const append = jest.spyOn(store, 'appendToStream');
    const result = await run({ kind: 'noop' });
    expect(append).not.toHaveBeenCalled();
    expect(result).toEqual({
      position: null,
      nextExpectedRevision: 0n,
      events: [],
      state: { total: 1, status: 'open' },
    });
    expect((await run({ kind: 'noop' }, { streamId: 'counter-none' })).nextExpectedRevision).toBeNull();
  });

  it('appends nothing when decide throws a domain error', async () => {
    await run({ kind: 'close' });
    const append = jest.spyOn(store, 'appendToStream');
    await expect(run({ kind: 'add', n: 1 })).rejects.toThrow(
      new ConflictError('Cannot add a counter whose status is closed'),
    );
    expect(append).not.toHaveBeenCalled();
  });

  it('answers a stale If-Match with PreconditionFailedError, before and during the append', async () => {
    await run({ kind: 'add', n: 1 });
    const append = jest.spyOn(store, 'appendToStream');
    await expect(run({ kind: 'add', n: 1 }, { ifMatch: 3n })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(append).not.toHaveBeenCalled();

    // The version matched at load, but another write landed before the append: no retry.
    const read = store.readStream.bind(store);
    const spy = jest.spyOn(store, 'readStream').mockImplementationOnce(async (...args) => {
      const events = await read(...args);
      await store.appendToStream('counter-1', [
        toEventData({ type: 'test.Added', data: { n: 0 } }, buildMetadata(context)),
      ]);
      return events;
    });
    await expect(run({ kind: 'add', n: 1 }, { ifMatch: 0n })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(spy).toHaveBeenCalledTimes(1);
    expect((await run({ kind: 'add', n: 1 }, { ifMatch: 1n })).nextExpectedRevision).toBe(2n);
  });
});

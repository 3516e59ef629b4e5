import {
  EventStoreUnavailableError,
  InvalidEventError,
  SqliteEventStore,
  type Position,
  type RecordedEvent,
} from '@filing/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMetadata, toEventData } from '../events/envelope';
import { classify, TransientError } from './failure';
import { appendProcessorRecord, field, parkedEvents, ProcessorRecords, processorStream } from './processor-records';
import { EventHandlingError, messagePosition, StreamProcessor, type ProcessorMessage } from './stream-processor';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };
const coded = (code: string) => Object.assign(new Error(code), { code });

describe('classify: what failed decides', () => {
  it.each([
    ['SQLITE_BUSY', coded('SQLITE_BUSY')],
    ['SQLITE_FULL', coded('SQLITE_FULL')],
    ['SQLITE_IOERR_WRITE', coded('SQLITE_IOERR_WRITE')],
    ['ENOSPC', coded('ENOSPC')],
    ['ECONNREFUSED', coded('ECONNREFUSED')],
    ['the store unavailable', new EventStoreUnavailableError('down')],
    ['a TransientError', new TransientError('later')],
  ])('%s is transient, wherever it was thrown and however it was wrapped', (_, cause) => {
    expect(classify(cause)).toBe('transient');
    const event = { id: 'e', type: 't', streamId: 's', position: { commit: 1n, prepare: 1n } };
    expect(classify(new EventHandlingError('p', event, { cause }))).toBe('transient');
  });

  it.each([
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a constraint', coded('SQLITE_CONSTRAINT_NOTNULL')],
    ['an event the store refuses', new InvalidEventError('empty type')],
    ['a thrown string', 'nope'],
    ['null', null],
  ])("%s on the event's content is poison", (_, cause) => {
    expect(classify(cause)).toBe('poison');
  });
});

describe('StreamProcessor', () => {
  let dir: string;
  let store: SqliteEventStore;
  const processors: StreamProcessor[] = [];
  const logger = { log: jest.fn(), error: jest.fn(), warn: jest.fn() };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'processor-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  });
  afterEach(async () => {
    for (const p of processors.splice(0)) await p.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function append(stream: string, type: string, data: Record<string, string> = {}): Promise<RecordedEvent> {
    const { position } = await store.appendToStream(stream, [toEventData({ type, data }, buildMetadata(context))]);
    const [event] = await store.readAll({ from: position, maxCount: 1 });
    return event;
  }

  /** A reactor that remembers what it handled and throws on events `failing` names. */
  function reactor(failing: Map<string, () => Error | undefined>, kind: 'reactor' | 'projector' = 'reactor') {
    const handled: string[] = [];
    let checkpoint: Position | null = null;
    const processor = new StreamProcessor(
      store,
      {
        name: 'test-reactor',
        kind,
        filter: { eventTypePrefixes: ['test.'] },
        resumeFrom: () => checkpoint,
        handle(batch: readonly ProcessorMessage[]) {
          for (const m of batch) {
            if (m.kind === 'event') {
              const failure = failing.get(field(m.event, 'name'))?.();
              if (failure) throw failure;
            }
          }
          for (const m of batch) if (m.kind === 'event') handled.push(field(m.event, 'name'));
          if (batch.length > 0) checkpoint = messagePosition(batch[batch.length - 1]);
        },
      },
      { logger, backoff: { minMs: 1, maxMs: 5 }, haltAfter: 3 },
    );
    processors.push(processor);
    return { processor, handled };
  }

  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  it('retries a transient failure for as long as it lasts, and never halts or parks on it', async () => {
    let left = 8;
    const { processor, handled } = reactor(new Map([['busy', () => (left-- > 0 ? coded('SQLITE_FULL') : undefined)]]));
    processor.start();
    await append('test-1', 'test.Added', { name: 'before' });
    await append('test-1', 'test.Added', { name: 'busy' });
    await until(() => handled.includes('busy'));
    expect(processor.status()).toMatchObject({ state: 'running', halted: null, parked: 0 });
    expect(processor.status().restarts).toBeGreaterThanOrEqual(8);
  });

  it('parks a poison event (recorded), goes on with the next, and another instance skips it too', async () => {
    const failing = new Map<string, () => Error | undefined>([['poison', () => new TypeError('bad content')]]);
    const first = reactor(failing);
    first.processor.start();
    await append('test-1', 'test.Added', { name: 'a' });
    const poison = await append('test-1', 'test.Added', { name: 'poison' });
    await append('test-1', 'test.Added', { name: 'b' });
    await until(() => first.handled.includes('b'));
    expect(first.handled).toEqual(['a', 'b']);
    expect(first.processor.status()).toMatchObject({ state: 'running', parked: 1 });
    const parked = parkedEvents(await store.readStream(processorStream('test-reactor')));
    expect([...parked.values()]).toEqual([
      expect.objectContaining({
        processor: 'test-reactor',
        event_id: poison.id,
        stream: 'test-1',
        error: 'bad content',
      }),
    ]);

    // Another instance, whose handler would not even fail: it reads the record and skips the event alike.
    const second = reactor(new Map());
    second.processor.start();
    await until(() => second.handled.includes('b'));
    expect(second.handled).toEqual(['a', 'b']);
  });

  it('handles a parked event again on a retry request once the cause is gone, and records the outcome', async () => {
    const failing = new Map<string, () => Error | undefined>([['poison', () => new TypeError('bad content')]]);
    const { processor, handled } = reactor(failing);
    processor.start();
    const poison = await append('test-1', 'test.Added', { name: 'poison' });
    await until(() => processor.status().parked === 1);
    failing.clear();
    const request = 'a7d6a2f0-0000-4000-8000-000000000001';
    await appendProcessorRecord(
      store,
      'test-reactor',
      {
        id: request,
        type: ProcessorRecords.ParkedEventRetryRequested,
        data: {
          processor: 'test-reactor',
          event_id: poison.id,
          position: `${poison.position.commit}/${poison.position.prepare}`,
        },
      },
      'operator:test',
    );
    await until(() => handled.includes('poison'));
    await until(() => processor.status().parked === 0);
    const records = await store.readStream(processorStream('test-reactor'));
    expect(records.find((r) => r.type === ProcessorRecords.ParkedEventRetried)?.data).toMatchObject({
      event_id: poison.id,
      request_id: request,
      outcome: 'handled',
    });
  });

  it('finds the poison event in a batch when the handler does not name it, by handling one event at a time', async () => {
    // Throws for the whole batch whenever it holds the poison event, naming nothing.
    const handled: string[] = [];
    let checkpoint: Position | null = null;
    const processor = new StreamProcessor(
      store,
      {
        name: 'test-reactor',
        kind: 'reactor',
        filter: { eventTypePrefixes: ['test.'] },
        resumeFrom: () => checkpoint,
        handle(batch: readonly ProcessorMessage[]) {
          const names = batch.flatMap((m) => (m.kind === 'event' ? [field(m.event, 'name')] : []));
          if (names.includes('poison')) throw new TypeError('somewhere in this batch');
          handled.push(...names);
          if (batch.length > 0) checkpoint = messagePosition(batch[batch.length - 1]);
        },
      },
      { logger, backoff: { minMs: 1, maxMs: 5 }, haltAfter: 3 },
    );
    processors.push(processor);
    const data = (name: string) => toEventData({ type: 'test.Added', data: { name } }, buildMetadata(context));
    // Appended together: they arrive in one batch.
    await store.appendToStream('test-1', [data('a'), data('poison'), data('b')]);
    processor.start();
    await append('test-1', 'test.Added', { name: 'c' });
    await until(() => handled.includes('c'));
    expect(handled).toEqual(['a', 'b', 'c']);
    const parked = [...parkedEvents(await store.readStream(processorStream('test-reactor'))).values()];
    expect(parked).toEqual([expect.objectContaining({ error: 'somewhere in this batch' })]);
    const [poison] = (await store.readStream('test-1')).filter((e) => field(e, 'name') === 'poison');
    expect(parked[0].event_id).toBe(poison.id);
  });

  it('halts a projector on a poison event instead, naming it', async () => {
    const { processor, handled } = reactor(new Map([['poison', () => new TypeError('bad content')]]), 'projector');
    processor.start();
    const poison = await append('test-1', 'test.Added', { name: 'poison' });
    await append('test-1', 'test.Added', { name: 'after' });
    await until(() => processor.status().state === 'halted');
    expect(processor.status().halted).toMatchObject({ eventId: poison.id, error: 'bad content' });
    expect(handled).toEqual([]);
  });
});

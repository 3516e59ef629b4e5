import { SqliteEventStore, type Position } from '@filing/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../../../test/support/webhooks';
import { buildMetadata, toEventData } from '../events/envelope';
import { appendProcessorRecord, ProcessorRecords } from '../processors/processor-records';
import { messagePosition, type ProcessorMessage } from '../processors/stream-processor';
import { ProjectionFailedError } from './batch-applier';
import { CheckpointStore } from './checkpoint-store';
import { LiveProjector, type LiveProjectorOptions } from './live-projector';
import type { Projection } from './projection';

const context = { account_id: 'acc', actor: 'test', correlation_id: 'c', causation_id: null };

const projection = (name: string): Projection => ({
  name,
  version: 1,
  tables: [],
  handles: ['test.'],
  setup() {},
  apply() {},
});

describe('LiveProjector', () => {
  let dir: string;
  let store: SqliteEventStore;
  let checkpoints: CheckpointStore;
  let projector: LiveProjector;
  /** Event ids projection `a` fails on. */
  let poison: Set<string>;
  let failures: unknown[];
  const logger = { log: jest.fn(), error: jest.fn(), warn: jest.fn() };
  const projections = [projection('a'), projection('b')];

  /** What the runner's batch does, reduced: `a` throws on poison, keeping what came before; checkpoints move. */
  function handle(batch: readonly ProcessorMessage[]): void {
    const resumed = projector.learnSkips(batch);
    const active = projector.active();
    const commit = (upTo: number) => {
      if (upTo === 0) return;
      const last = messagePosition(batch[upTo - 1]);
      checkpoints.commit(new Map([...checkpoints.current, ...active.map((p) => [p.name, last] as const)]));
    };
    batch.forEach((work, i) => {
      if (work.kind !== 'event' || !poison.has(work.event.id) || projector.isSkipped('a', work.event.id)) return;
      if (!active.some((p) => p.name === 'a')) return;
      commit(i);
      throw new ProjectionFailedError('a', work.event, { cause: 'boom' });
    });
    commit(batch.length);
    if (resumed.length > 0) projector.resume(resumed);
    projector.settleReached();
  }

  function make(options: Partial<LiveProjectorOptions> = {}): LiveProjector {
    projector = new LiveProjector({
      store,
      logger,
      projections,
      checkpoints,
      maxBatch: 10,
      backoff: { minMs: 5, maxMs: 20 },
      isolateFailures: true,
      handle,
      fail: (err) => failures.push(err),
      ...options,
    });
    return projector;
  }

  async function append(...types: string[]): Promise<{ position: Position; ids: string[] }> {
    const data = types.map((type) => toEventData({ type, data: {} }, buildMetadata(context)));
    const { position } = await store.appendToStream('s', data);
    return { position, ids: data.map((d) => d.id) };
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'live-projector-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    checkpoints = new CheckpointStore(logger);
    poison = new Set();
    failures = [];
    jest.clearAllMocks();
  });
  afterEach(async () => {
    await projector.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows the log and answers a waiter once every projection has reached its position', async () => {
    make().start();
    const { position } = await append('test.Added', 'test.Added');
    expect(await projector.waitFor(position, 5000)).toBe(true);
    expect(projector.reached(position)).toBe(true);
    expect(projector.statuses()).toEqual([
      expect.objectContaining({ name: 'projection:a', kind: 'projector', state: 'running', checkpoint: position }),
      expect.objectContaining({ name: 'projection:b', kind: 'projector', state: 'running', checkpoint: position }),
    ]);
  });

  it('halts the projection that keeps failing on one event alone; writers stop waiting for it', async () => {
    const before = await append('test.Added');
    const boom = await append('test.Boom');
    poison.add(boom.ids[0]);
    make().start();
    const after = await append('test.Added');
    expect(await projector.waitFor(after.position, 5000)).toBe(true);
    expect(projector.haltedProjections()).toEqual([
      expect.objectContaining({ projection: 'a', eventId: boom.ids[0], eventType: 'test.Boom' }),
    ]);
    expect(projector.haltedProjections(['b'])).toEqual([]);
    expect(projector.statuses().map((s) => s.state)).toEqual(['halted', 'running']);
    expect(checkpoints.get('a')).toEqual(before.position);
    expect(projector.resumePosition()).toEqual(after.position);
    expect(logger.error).toHaveBeenCalledWith(expect.stringMatching(/Projection a HALTED on event .* \(test\.Boom\)/));
  });

  it('resumes a halted projection from its checkpoint once an operator skips its event', async () => {
    const boom = await append('test.Boom');
    poison.add(boom.ids[0]);
    make().start();
    const during = await append('test.Added');
    expect(await projector.waitFor(during.position, 5000)).toBe(true);
    expect(projector.haltedCount).toBe(1);
    await appendProcessorRecord(
      store,
      'projection:a',
      {
        id: '0193a5b2-0000-7000-8000-0000000000ab',
        type: ProcessorRecords.EventSkipped,
        data: { processor: 'projection:a', event_id: boom.ids[0] },
      },
      'operator:test',
    );
    const after = await append('test.Added');
    expect(await projector.waitFor(after.position, 5000)).toBe(true);
    expect(projector.haltedProjections()).toEqual([]);
    expect(checkpoints.get('a')).toEqual(after.position);
    expect(projector.isSkipped('a', boom.ids[0])).toBe(true);
    expect(projector.isSkipped('b', boom.ids[0])).toBe(false);

    // Read back from the record stream at the next start, as every instance does.
    await projector.stop();
    const next = make();
    await next.loadSkips();
    expect(next.isSkipped('a', boom.ids[0])).toBe(true);
  });

  it('with isolation off, hands the first failure to the runner instead of halting a projection', async () => {
    const boom = await append('test.Boom');
    poison.add(boom.ids[0]);
    make({ isolateFailures: false }).start();
    const waited = projector.waitFor(boom.position, 5000);
    await eventually(() => failures[0]);
    expect(failures).toEqual([expect.any(ProjectionFailedError)]);
    expect(projector.haltedCount).toBe(0);
    projector.settleAll(false);
    expect(await waited).toBe(false);
  });
});

import type { Position, RecordedEvent } from '@filing/event-store';
import type Database from 'better-sqlite3';
import type { RecordedEnvelope } from '../events/envelope';
import { buildMetadata } from '../events/envelope';
import type { ProcessorMessage } from '../processors/stream-processor';
import { BatchApplier, ProjectionFailedError, type BatchTarget } from './batch-applier';
import { CheckpointStore } from './checkpoint-store';
import type { Projection } from './projection';
import { openReadDatabase } from './read-database';
import { inImmediateTransaction } from './statements';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
const metadata = { ...buildMetadata({ account_id: 'acc', actor: 't', correlation_id: 'c', causation_id: null }) };

function event(n: number, type = 'test.Added'): ProcessorMessage {
  const recorded: RecordedEvent = {
    id: `e${n}`,
    type,
    streamId: 's',
    revision: BigInt(n),
    position: at(n),
    data: {},
    metadata,
    created: new Date(0),
  };
  return { kind: 'event', event: recorded };
}

/** Logs every event it applies (`<projection>:<event id>`); throws on `test.Boom`. */
function logging(name: string, seen: RecordedEnvelope[] = []): Projection & { calls: string[] } {
  const calls: string[] = [];
  return {
    name,
    version: 1,
    tables: [`${name}_log`],
    handles: ['test.'],
    calls,
    setup(db) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${name}_log (event_id TEXT PRIMARY KEY)`);
    },
    apply(db, e) {
      seen.push(e);
      db.prepare(`INSERT INTO ${name}_log (event_id) VALUES (?)`).run(e.id);
      if (e.type === 'test.Boom') throw new Error('boom');
    },
    beginBatch: (_db, kind) => void calls.push(`begin rebuild=${kind.rebuild}`),
    endBatch: (db) => void calls.push(`end inTransaction=${db.inTransaction}`),
  };
}

const logged = (db: Database.Database, name: string) =>
  db
    .prepare<[], { event_id: string }>(`SELECT event_id FROM ${name}_log ORDER BY event_id`)
    .all()
    .map((r) => r.event_id);

describe('BatchApplier', () => {
  let db: Database.Database;
  let checkpoints: CheckpointStore;
  let target: BatchTarget;
  let skipped: Set<string>;
  let applier: BatchApplier;
  const live = { rebuild: false };

  beforeEach(() => {
    db = openReadDatabase(':memory:');
    checkpoints = new CheckpointStore({ log: () => {} });
    target = { db, transaction: (work) => inImmediateTransaction(db, work) };
    skipped = new Set();
    applier = new BatchApplier(checkpoints, (projection, id) => skipped.has(`${projection}:${id}`));
  });
  afterEach(() => db.close());

  function run(projections: Projection[], batch: ProcessorMessage[], kind = live) {
    checkpoints.commit(applier.apply(target, projections, batch, kind));
  }

  it('gives each projection the events past its own checkpoint, then moves every checkpoint to the end', () => {
    const [behind, ahead] = [logging('behind'), logging('ahead')];
    checkpoints.load(db, [behind, ahead]);
    run([ahead], [event(1), event(2)]);
    run([behind, ahead], [event(1), event(2), event(3), { kind: 'checkpoint', position: at(4) }]);
    expect(logged(db, 'behind')).toEqual(['e1', 'e2', 'e3']);
    expect(logged(db, 'ahead')).toEqual(['e1', 'e2', 'e3']);
    expect(checkpoints.get('behind')).toEqual(at(4));
    expect(checkpoints.get('ahead')).toEqual(at(4));
  });

  it('converts an event once for every projection that handles it, and none for foreign events', () => {
    const seen: RecordedEnvelope[] = [];
    const [a, b] = [logging('a', seen), logging('b', seen)];
    checkpoints.load(db, [a, b]);
    run([a, b], [event(1), event(2, 'other.Thing')]);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(checkpoints.get('a')).toEqual(at(2));
  });

  it('passes over an event an operator skipped for one projection, and applies it to the others', () => {
    const [a, b] = [logging('a'), logging('b')];
    checkpoints.load(db, [a, b]);
    skipped.add('a:e2');
    run([a, b], [event(1), event(2), event(3)]);
    expect(logged(db, 'a')).toEqual(['e1', 'e3']);
    expect(logged(db, 'b')).toEqual(['e1', 'e2', 'e3']);
    expect(checkpoints.get('a')).toEqual(at(3));
  });

  it('rolls the whole batch back on a failure, naming the projection and the event', () => {
    const [a, b] = [logging('a'), logging('b')];
    checkpoints.load(db, [a, b]);
    run([a, b], [event(1)]);
    let failure: unknown;
    try {
      run([a, b], [event(2), event(3, 'test.Boom'), event(4)]);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(ProjectionFailedError);
    expect((failure as ProjectionFailedError).projection).toBe('a');
    expect((failure as ProjectionFailedError).event.id).toBe('e3');
    expect(logged(db, 'a')).toEqual(['e1']);
    expect(logged(db, 'b')).toEqual(['e1']);
    expect(checkpoints.get('a')).toEqual(at(1));
  });

  it('opens and closes each batch inside its transaction, telling a rebuild from live work', () => {
    const a = logging('a');
    checkpoints.load(db, [a]);
    run([a], [event(1)]);
    run([a], [event(2)], { rebuild: true });
    expect(a.calls).toEqual([
      'begin rebuild=false',
      'end inTransaction=true',
      'begin rebuild=true',
      'end inTransaction=true',
    ]);
  });
});

import { positionToString, type Position } from '@filing/event-store';
import type Database from 'better-sqlite3';
import { CheckpointStore } from './checkpoint-store';
import type { Projection } from './projection';
import { openReadDatabase } from './read-database';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

function table(name: string, version = 1, extra: Partial<Projection> = {}): Projection {
  return {
    name,
    version,
    tables: [`${name}_rows`],
    handles: [`${name}.`],
    setup(db) {
      db.exec(`CREATE TABLE IF NOT EXISTS "${name}_rows" (id TEXT PRIMARY KEY)`);
    },
    apply() {},
    ...extra,
  };
}

const rows = (db: Database.Database) =>
  db
    .prepare<[], { name: string; version: number; position: string | null }>(
      'SELECT name, version, position FROM projection_checkpoints ORDER BY name',
    )
    .all();
const tableExists = (db: Database.Database, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

describe('CheckpointStore', () => {
  let db: Database.Database;
  const logger = { log: jest.fn() };
  let store: CheckpointStore;

  beforeEach(() => {
    db = openReadDatabase(':memory:');
    logger.log.mockClear();
    store = new CheckpointStore(logger);
  });
  afterEach(() => db.close());

  /** What a batch does: save inside its transaction, then commit to the store. */
  function applied(next: Record<string, Position | null>, active: readonly Projection[]) {
    const map = new Map(Object.entries(next));
    db.transaction(() => store.save(db, map, active)).immediate();
    store.commit(map);
  }

  it('makes the tables and a checkpoint row for a new projection, which starts from nothing', () => {
    const a = table('a');
    store.load(db, [a]);
    expect(tableExists(db, 'a_rows')).toBe(true);
    expect(rows(db)).toEqual([{ name: 'a', version: 1, position: null }]);
    expect(store.get('a')).toBeNull();
    expect(store.lowest([a])).toBeNull();
  });

  it('saves the checkpoints that moved and reads them back after a restart', () => {
    const [a, b] = [table('a'), table('b')];
    store.load(db, [a, b]);
    applied({ a: at(5), b: at(7) }, [a, b]);
    expect(rows(db).map((r) => r.position)).toEqual([positionToString(at(5)), positionToString(at(7))]);

    const again = new CheckpointStore(logger);
    again.load(db, [a, b]);
    expect(again.get('a')).toEqual(at(5));
    expect(again.lowest([a, b])).toEqual(at(5));
    expect(again.reached([a, b], at(5))).toBe(true);
    expect(again.reached([a, b], at(6))).toBe(false);
    expect(again.reached([b], at(6))).toBe(true);
  });

  it('writes only the checkpoints of the projections given (a halted one stays where it stopped)', () => {
    const [a, b] = [table('a'), table('b')];
    store.load(db, [a, b]);
    applied({ a: at(3), b: at(3) }, [a, b]);
    applied({ a: at(9), b: at(9) }, [a]);
    expect(rows(db).map((r) => r.position)).toEqual([positionToString(at(9)), positionToString(at(3))]);
  });

  it('drops and rebuilds a projection whose version changed, and says why', () => {
    store.load(db, [table('a')]);
    db.prepare("INSERT INTO a_rows (id) VALUES ('x')").run();
    applied({ a: at(4) }, [table('a')]);

    const next = new CheckpointStore(logger);
    next.load(db, [table('a', 2)]);
    expect(next.get('a')).toBeNull();
    expect(rows(db)).toEqual([{ name: 'a', version: 2, position: null }]);
    expect(db.prepare('SELECT count(*) AS n FROM a_rows').get()).toEqual({ n: 0 });
    expect(logger.log).toHaveBeenCalledWith('Projection a: version 1 → 2, rebuilding');
  });

  it('drops a superseded projection that the read model still holds, and rebuilds the one replacing it', () => {
    const old = table('old');
    store.load(db, [old, table('kept')]);
    applied({ old: at(2), kept: at(2) }, [old]);
    const replacing = table('kept', 1, { supersedes: [{ name: 'old', tables: ['old_rows'] }] });

    const next = new CheckpointStore(logger);
    next.load(db, [replacing]);
    expect(tableExists(db, 'old_rows')).toBe(false);
    expect(rows(db)).toEqual([{ name: 'kept', version: 1, position: null }]);
    expect(logger.log).toHaveBeenCalledWith('Projection kept: supersedes old, rebuilding');
  });

  it('runs `inside` in the same transaction as the setup', () => {
    let inTransaction = false;
    store.load(db, [table('a')], () => (inTransaction = db.inTransaction));
    expect(inTransaction).toBe(true);
  });

  it('resetAll drops every table and checkpoint, and forgets the positions', () => {
    const a = table('a');
    store.load(db, [a]);
    applied({ a: at(8) }, [a]);
    store.resetAll(db, [a]);
    expect(tableExists(db, 'a_rows')).toBe(false);
    expect(rows(db)).toEqual([]);
    expect(store.get('a')).toBeNull();
  });
});

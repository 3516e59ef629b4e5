import Database from 'better-sqlite3';
import { forgetIds, isKnownId, rememberId } from './known-ids';

describe('the ids a read model is known to hold', () => {
  let db: Database.Database;
  let other: Database.Database;
  beforeEach(() => {
    db = new Database(':memory:');
    other = new Database(':memory:');
  });
  afterEach(() => {
    db.close();
    other.close();
  });

  it('holds an id for its table, account and handle only', () => {
    rememberId(db, 'entities', 'acc-1', 'e1');
    expect([
      isKnownId(db, 'entities', 'acc-1', 'e1'),
      isKnownId(db, 'entities', 'acc-2', 'e1'),
      isKnownId(db, 'orders', 'acc-1', 'e1'),
      isKnownId(other, 'entities', 'acc-1', 'e1'),
    ]).toEqual([true, false, false, false]);
  });

  it('forgets one id, or every id of a table', () => {
    rememberId(db, 'entities', 'acc-1', 'e1');
    rememberId(db, 'entities', 'acc-1', 'e2');
    rememberId(db, 'orders', 'acc-1', 'o1');
    forgetIds(db, 'entities', 'e1');
    expect([isKnownId(db, 'entities', 'acc-1', 'e1'), isKnownId(db, 'entities', 'acc-1', 'e2')]).toEqual([false, true]);
    forgetIds(db, 'entities');
    expect([isKnownId(db, 'entities', 'acc-1', 'e2'), isKnownId(db, 'orders', 'acc-1', 'o1')]).toEqual([false, true]);
  });

  it('starts over past 10,000 ids of a table rather than growing', () => {
    for (let i = 0; i < 10_000; i++) rememberId(db, 'entities', 'acc-1', `e${i}`);
    expect(isKnownId(db, 'entities', 'acc-1', 'e0')).toBe(true);
    rememberId(db, 'entities', 'acc-1', 'e10000');
    expect([isKnownId(db, 'entities', 'acc-1', 'e0'), isKnownId(db, 'entities', 'acc-1', 'e10000')]).toEqual([
      false,
      true,
    ]);
  });
});

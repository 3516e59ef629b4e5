import Database from 'better-sqlite3';
import { OpenDeliveries } from './open-deliveries';

const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });
const owner = (endpointId: string, accountId = 'A') => ({ endpointId, accountId });

describe('the fan-out file: open deliveries and cancellations', () => {
  let db: Database.Database;
  let rows: OpenDeliveries;
  beforeEach(() => {
    db = new Database(':memory:');
    rows = new OpenDeliveries(db);
    rows.setup();
  });
  afterEach(() => db.close());

  it('keeps whose a closed delivery was, so a redelivery opens it again, from its own position', () => {
    rows.put('d1', { owner: owner('E1'), open: true, openedAt: at(5) });
    expect(rows.get('d1')).toEqual({ owner: owner('E1'), open: true, openedAt: at(5) });
    rows.put('d1', { owner: owner('E1'), open: false, openedAt: null });
    expect(rows.get('d1')).toEqual({ owner: owner('E1'), open: false, openedAt: null });
    expect(rows.openCount()).toBe(0);
    rows.put('d1', { owner: owner('E1'), open: true, openedAt: at(9) });
    expect(rows.get('d1')?.openedAt).toEqual(at(9));
    expect(rows.get('unknown')).toBeUndefined();
  });

  it("lists an endpoint's deliveries open now and since a position at most, page by page in id order", () => {
    rows.put('a', { owner: owner('E1'), open: true, openedAt: at(1) });
    rows.put('b', { owner: owner('E1'), open: true, openedAt: at(2) });
    rows.put('c', { owner: owner('E1'), open: false, openedAt: null });
    rows.put('d', { owner: owner('E1'), open: true, openedAt: at(3) });
    rows.put('e', { owner: owner('E2'), open: true, openedAt: at(1) });
    rows.put('f', { owner: owner('E1'), open: true, openedAt: at(7) }); // opened after the disable
    expect(rows.openOf('E1', at(3), '', 2)).toEqual(['a', 'b']);
    expect(rows.openOf('E1', at(3), 'b', 2)).toEqual(['d']);
    expect(rows.openOf('E1', at(3), 'd', 2)).toEqual([]);
    expect(rows.openOf('E2', at(3), '', 10)).toEqual(['e']);
    expect(rows.openCount()).toBe(5);
  });

  it('keeps cancellation jobs in order with their progress, until done', () => {
    rows.addCancellation('E1', 'endpoint disabled or deleted', at(4));
    rows.addCancellation('E2', 'webhook notifications switched off', at(6));
    const first = rows.nextCancellation()!;
    expect(first).toMatchObject({ endpointId: 'E1', at: at(4), afterId: '' });
    rows.progress(first.seq, 'd9');
    expect(rows.nextCancellation()).toMatchObject({ endpointId: 'E1', afterId: 'd9' });
    rows.done(first.seq);
    expect(rows.nextCancellation()).toMatchObject({ endpointId: 'E2', reason: 'webhook notifications switched off' });
    expect(rows.cancellationsWaiting()).toBe(1);
  });

  it('takes a file from before opened positions were kept: its open rows count as open from the start', () => {
    const old = new Database(':memory:');
    old.exec(`CREATE TABLE webhook_fanout_deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL,
      account_id TEXT NOT NULL, open INTEGER NOT NULL);
      INSERT INTO webhook_fanout_deliveries VALUES ('x', 'E1', 'A', 1)`);
    const migrated = new OpenDeliveries(old);
    migrated.setup();
    migrated.setup();
    expect(migrated.openOf('E1', at(1), '', 10)).toEqual(['x']);
    old.close();
  });
});

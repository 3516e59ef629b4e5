import { type Position, positionToString } from '@filing/event-store';
import { cachedStatement as stmt } from '@filing/platform';
import type Database from 'better-sqlite3';
import type { DeliveryOwner } from './fanout-view';

/** What the fan-out knows of one delivery: whose it is, whether it is pending, since which event. */
export interface DeliveryRow {
  readonly owner: DeliveryOwner;
  readonly open: boolean;
  /** The position from which it is pending (its source event, or its redelivery); null when closed. */
  readonly openedAt: Position | null;
}

/** Pending deliveries of one endpoint to end as cancelled, as of a disable's (or a switch-off's) position. */
export interface CancellationJob {
  readonly seq: number;
  readonly endpointId: string;
  readonly reason: string;
  readonly at: Position;
  /** The last delivery id done: the job goes on after it (ids in order). */
  readonly afterId: string;
}

/**
 * The fan-out's deliveries and pending cancellations, in `webhook-fanout.db`: every delivery it
 * opened, with `open` while it is pending, so memory does not grow with the backlog (a partial
 * index on the open ones serves a cancellation endpoint by endpoint). Written only inside the
 * fan-out's save transaction, except the jobs' progress (PendingCancellations).
 */
export class OpenDeliveries {
  constructor(private readonly db: Database.Database) {}

  setup(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS webhook_fanout_deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL,
        account_id TEXT NOT NULL, open INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS webhook_fanout_cancellations (seq INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id TEXT NOT NULL, reason TEXT NOT NULL, at_commit INTEGER NOT NULL, at_prepare INTEGER NOT NULL,
        after_id TEXT NOT NULL DEFAULT '')`);
    const columns = (this.db.pragma('table_info(webhook_fanout_deliveries)') as Array<{ name: string }>).map(
      (c) => c.name,
    );
    // A file from before: its open rows read as opened at the start (the stream check still decides).
    if (!columns.includes('opened_commit')) {
      this.db.exec(`ALTER TABLE webhook_fanout_deliveries ADD COLUMN opened_commit INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE webhook_fanout_deliveries ADD COLUMN opened_prepare INTEGER NOT NULL DEFAULT 0`);
    }
    this.db.exec(`CREATE INDEX IF NOT EXISTS webhook_fanout_open_by_endpoint
      ON webhook_fanout_deliveries (endpoint_id, id) WHERE open = 1`);
  }

  get(id: string): DeliveryRow | undefined {
    const row = stmt(
      this.db,
      'SELECT endpoint_id, account_id, open, opened_commit, opened_prepare FROM webhook_fanout_deliveries WHERE id = ?',
    )
      .safeIntegers(true)
      .get(id) as
      | { endpoint_id: string; account_id: string; open: bigint; opened_commit: bigint; opened_prepare: bigint }
      | undefined;
    if (!row) return undefined;
    const open = row.open === 1n;
    return {
      owner: { endpointId: row.endpoint_id, accountId: row.account_id },
      open,
      openedAt: open ? { commit: row.opened_commit, prepare: row.opened_prepare } : null,
    };
  }

  /** Inside the caller's transaction. */
  put(id: string, row: DeliveryRow): void {
    stmt(
      this.db,
      `INSERT INTO webhook_fanout_deliveries (id, endpoint_id, account_id, open, opened_commit, opened_prepare)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET open = excluded.open,
         opened_commit = CASE WHEN excluded.open = 1 THEN excluded.opened_commit ELSE opened_commit END,
         opened_prepare = CASE WHEN excluded.open = 1 THEN excluded.opened_prepare ELSE opened_prepare END`,
    ).run(
      id,
      row.owner.endpointId,
      row.owner.accountId,
      row.open ? 1 : 0,
      row.openedAt?.commit ?? 0n,
      row.openedAt?.prepare ?? 0n,
    );
  }

  openCount(): number {
    return (stmt(this.db, 'SELECT COUNT(*) AS n FROM webhook_fanout_deliveries WHERE open = 1').get() as { n: number })
      .n;
  }

  /** Up to `limit` of the endpoint's deliveries open now and since at most `at`, after `afterId`, in id order. */
  openOf(endpointId: string, at: Position, afterId: string, limit: number): string[] {
    return (
      stmt(
        this.db,
        `SELECT id FROM webhook_fanout_deliveries WHERE endpoint_id = ? AND open = 1 AND id > ?
         AND (opened_commit < ? OR (opened_commit = ? AND opened_prepare <= ?)) ORDER BY id LIMIT ?`,
      ).all(endpointId, afterId, at.commit, at.commit, at.prepare, limit) as Array<{ id: string }>
    ).map((r) => r.id);
  }

  /** Inside the caller's transaction: the save that moves the checkpoint past the disable. */
  addCancellation(endpointId: string, reason: string, at: Position): void {
    stmt(
      this.db,
      'INSERT INTO webhook_fanout_cancellations (endpoint_id, reason, at_commit, at_prepare) VALUES (?, ?, ?, ?)',
    ).run(endpointId, reason, at.commit, at.prepare);
  }

  nextCancellation(): CancellationJob | undefined {
    const row = stmt(this.db, 'SELECT * FROM webhook_fanout_cancellations ORDER BY seq LIMIT 1')
      .safeIntegers(true)
      .get() as
      | { seq: bigint; endpoint_id: string; reason: string; at_commit: bigint; at_prepare: bigint; after_id: string }
      | undefined;
    if (!row) return undefined;
    return {
      seq: Number(row.seq),
      endpointId: row.endpoint_id,
      reason: row.reason,
      at: { commit: row.at_commit, prepare: row.at_prepare },
      afterId: row.after_id,
    };
  }

  cancellationsWaiting(): number {
    return (stmt(this.db, 'SELECT COUNT(*) AS n FROM webhook_fanout_cancellations').get() as { n: number }).n;
  }

  progress(seq: number, afterId: string): void {
    stmt(this.db, 'UPDATE webhook_fanout_cancellations SET after_id = ? WHERE seq = ?').run(afterId, seq);
  }

  done(seq: number): void {
    stmt(this.db, 'DELETE FROM webhook_fanout_cancellations WHERE seq = ?').run(seq);
  }
}

/** For logs. */
export const describeJob = (job: CancellationJob): string =>
  `endpoint ${job.endpointId} as of ${positionToString(job.at)}`;

import type Database from 'better-sqlite3';

/**
 * Rows the embedded store removes for good: a tombstoned stream's, and those a truncation
 * (`$tb`) hides. EventStoreDB's scavenge does the same later; here it happens in the write that
 * asks for it, so no copy of the removed bytes stays in `events.db` beyond the WAL checkpoint.
 *
 * Why no consumer can skip anything because of it (the conformance suite checks each point):
 * - a consumer's checkpoint is a position, and catch-up reads `position > checkpoint`: a removed
 *   row drops out of that read and renumbers nothing, so every other row is still found;
 * - positions are never reused: `log_floor` keeps the highest position handed out while the rows
 *   at the head of the log are removed, and the next event goes past it (SQLite alone would give
 *   it max + 1, the removed row's position, which a consumer past that row would never read);
 * - the live tail kept in memory (recent-appends.ts) is dropped after a removal, so a removed
 *   event is not handed out from memory either.
 * The removed events themselves are simply never delivered again: a consumer that had not read
 * them yet does not see them.
 */
function statements(db: Database.Database) {
  return {
    deleteStream: db.prepare<[string]>('DELETE FROM events WHERE stream_id = ?'),
    deleteBefore: db.prepare<[string, bigint]>('DELETE FROM events WHERE stream_id = ? AND revision < ?'),
    lastOf: db.prepare<[string], { revision: bigint | null }>(
      'SELECT max(revision) AS revision FROM events WHERE stream_id = ?',
    ),
    keepFloor: db.prepare(
      `INSERT INTO log_floor (id, position) SELECT 1, position FROM events WHERE true ORDER BY position DESC LIMIT 1
         ON CONFLICT (id) DO UPDATE SET position = max(log_floor.position, excluded.position)`,
    ),
    floor: db.prepare<[], { floor: bigint; head: bigint | null }>(
      'SELECT f.position AS floor, (SELECT max(position) FROM events) AS head FROM log_floor f',
    ),
    dropFloor: db.prepare('DELETE FROM log_floor'),
    markTombstoned: db.prepare<[string]>(
      `INSERT INTO stream_metadata (stream_id, deleted) VALUES (?, 2)
         ON CONFLICT (stream_id) DO UPDATE SET max_age = NULL, max_count = NULL, truncate_before = NULL, deleted = 2`,
    ),
    setTruncateBefore: db.prepare<[string, bigint]>(
      `INSERT INTO stream_metadata (stream_id, truncate_before, deleted) VALUES (?, ?, 0)
         ON CONFLICT (stream_id) DO UPDATE SET truncate_before = excluded.truncate_before`,
    ),
  };
}

export type RemovedRowStatements = ReturnType<typeof statements>;

export const RemovedRows = {
  statements,

  /** Every row of the stream goes; the stream is marked so that nothing is written to it again. */
  tombstone(stmt: RemovedRowStatements, streamId: string): void {
    stmt.keepFloor.run();
    stmt.deleteStream.run(streamId);
    stmt.markTombstoned.run(streamId);
  },

  /**
   * `$tb` = before, and the rows it hides go, except the stream's last one (as a scavenge keeps
   * it): the stream's revision, and so the next append's, must not start again from 0.
   */
  truncate(stmt: RemovedRowStatements, streamId: string, before: bigint): void {
    stmt.setTruncateBefore.run(streamId, before);
    const last = stmt.lastOf.get(streamId)?.revision ?? null;
    if (last === null) return;
    stmt.keepFloor.run();
    stmt.deleteBefore.run(streamId, before < last ? before : last);
  },

  /** The position the next event must take (past the floor), or null for SQLite's own max + 1. */
  nextPosition(stmt: RemovedRowStatements): bigint | null {
    const row = stmt.floor.get();
    if (!row) return null;
    if (row.head !== null && row.head >= row.floor) {
      stmt.dropFloor.run();
      return null;
    }
    stmt.dropFloor.run();
    return row.floor + 1n;
  },
};

import Database from 'better-sqlite3';

/**
 * The baselines' event table: the sqlite store's row shape and durability (WAL,
 * synchronous=FULL) with nothing of ours around it, and its insert.
 */
export function openRawEvents(file: string): { db: Database.Database; insert: Database.Statement } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
    event_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created INTEGER NOT NULL,
    UNIQUE (stream_id, revision))`);
  const insert = db.prepare(
    'INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  return { db, insert };
}

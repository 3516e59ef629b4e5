import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** The file name of the content store in DATA_DIR. */
export const DOCUMENT_CONTENT_FILE = 'documents.db';

/**
 * Document bytes, by document id, in `DATA_DIR/documents.db`. Not a read model: the events hold
 * only each content's SHA-256 and size (the stream must not carry megabytes of base64), so this
 * file is the bytes' only copy and no replay or rebuild touches it. The trade-off: it must be
 * backed up together with the events (docs/operations.md), and every service process serving
 * documents needs the same file.
 *
 * Bytes are written before the event that adds their document and removed after the event that
 * deletes it. A blob whose event was never appended (a failed or crashed append) is invisible:
 * content is only ever served for a document the read model holds.
 */
export class DocumentContentStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<DocumentContentStore['prepare']>;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // The only copy: bytes acknowledged to a client must survive a crash.
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS document_contents (
      document_id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      content BLOB NOT NULL,
      stored_at TEXT NOT NULL
    )`);
    this.statements = this.prepare();
  }

  private prepare() {
    return {
      put: this.db.prepare<[string, string, string, number, Buffer, string]>(
        'INSERT OR REPLACE INTO document_contents (document_id, account_id, sha256, size_bytes, content, stored_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      get: this.db.prepare<[string, string], { content: Buffer }>('SELECT content FROM document_contents WHERE document_id = ? AND account_id = ?'),
      remove: this.db.prepare<[string]>('DELETE FROM document_contents WHERE document_id = ?'),
      count: this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM document_contents'),
    };
  }

  put(documentId: string, accountId: string, sha256: string, content: Buffer): void {
    this.statements.put.run(documentId, accountId, sha256, content.length, content, new Date().toISOString());
  }

  /** The bytes, or null when there are none for this document in this account. */
  get(documentId: string, accountId: string): Buffer | null {
    return this.statements.get.get(documentId, accountId)?.content ?? null;
  }

  remove(documentId: string): void {
    this.statements.remove.run(documentId);
  }

  /** How many contents are stored (tests, diagnostics). */
  count(): number {
    return this.statements.count.get()!.n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

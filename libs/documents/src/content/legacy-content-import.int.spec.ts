import { EventStoreUnavailableError, SqliteEventStore } from '@filing/event-store';
import { type AppConfig, type CommandContext, ServiceKeys } from '@filing/platform';
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocumentAggregate } from '../document.aggregate';
import { appendDocumentAdded } from './testing';
import { CONTENT_CHUNK_BYTES } from './content-chunks';
import { contentStreamId, DocumentContentStore } from './document-content.store';
import { IMPORTED_CONTENT_FILE, LEGACY_CONTENT_FILE, LegacyContentImport } from './legacy-content-import';

/** Upgrading a DATA_DIR whose documents.db (the earlier versions' content store) holds the bytes. */
describe('importing an earlier DATA_DIR/documents.db into content streams', () => {
  const context: CommandContext = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r', causation_id: null };
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  let dataDir: string;
  let store: SqliteEventStore;
  let contents: DocumentContentStore;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'documents-import-'));
    store = new SqliteEventStore({ file: ':memory:' });
    contents = new DocumentContentStore(store, ServiceKeys.random().secretBox());
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const importer = () => new LegacyContentImport({ dataDir } as AppConfig, store, contents);

  /** documents.db as the earlier versions wrote it. */
  function legacyFile(rows: Array<[id: string, bytes: Buffer]>): void {
    const db = new Database(join(dataDir, LEGACY_CONTENT_FILE));
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE document_contents (document_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, sha256 TEXT NOT NULL,
      size_bytes INTEGER NOT NULL, content BLOB NOT NULL, stored_at TEXT NOT NULL)`);
    const insert = db.prepare('INSERT INTO document_contents VALUES (?, ?, ?, ?, ?, ?)');
    for (const [id, bytes] of rows)
      insert.run(id, 'acc-1', sha256(bytes), bytes.length, bytes, new Date().toISOString());
    db.close();
  }
  const addDocument = (id: string, bytes: Buffer) =>
    appendDocumentAdded(store, { ...context, account_id: 'acc-1' }, id, bytes);
  const digest = (bytes: Buffer) => ({ size_bytes: bytes.length, sha256: sha256(bytes) });

  it('gives every live document its bytes, skips deleted and orphan ones and wrong bytes, then renames the file', async () => {
    const [big, small, gone, orphan, wrong] = [
      randomBytes(3 * CONTENT_CHUNK_BYTES + 5),
      randomBytes(10),
      randomBytes(10),
      randomBytes(10),
      randomBytes(10),
    ];
    for (const [id, bytes] of [
      ['big', big],
      ['small', small],
      ['gone', gone],
      ['wrong', randomBytes(10)],
    ] as const)
      await addDocument(id, bytes);
    await DocumentAggregate.run(store, context, { kind: 'delete', id: 'gone', account_id: 'acc-1' });
    legacyFile([
      ['big', big],
      ['small', small],
      ['gone', gone],
      ['orphan', orphan],
      ['wrong', wrong],
    ]);

    expect(await importer().run()).toEqual({ imported: 2, present: 0, skipped: 2, mismatched: 1 });
    expect((await contents.read('big', digest(big)))!.equals(big)).toBe(true);
    expect((await contents.read('small', digest(small)))!.equals(small)).toBe(true);
    for (const id of ['gone', 'orphan', 'wrong']) expect(await store.readStream(contentStreamId(id))).toEqual([]);
    const chunks = await store.readStream(contentStreamId('big'));
    expect(chunks.map((e) => e.metadata)).toEqual(
      chunks.map(() => expect.objectContaining({ account_id: 'acc-1', actor: 'system:documents-import' })),
    );

    expect(existsSync(join(dataDir, LEGACY_CONTENT_FILE))).toBe(false);
    expect(existsSync(join(dataDir, IMPORTED_CONTENT_FILE))).toBe(true);
    expect(await importer().run()).toBeNull();
  });

  it('completes an import cut short without writing a chunk twice, and leaves complete ones alone', async () => {
    // Imported in id order: the small one, then the big one, which fails half way.
    const [small, big] = [randomBytes(10), randomBytes(5 * CONTENT_CHUNK_BYTES)];
    await addDocument('a-small', small);
    await addDocument('b-big', big);
    legacyFile([
      ['a-small', small],
      ['b-big', big],
    ]);
    const append = store.appendToStream.bind(store);
    let appends = 0;
    jest.spyOn(store, 'appendToStream').mockImplementation(async (...args) => {
      // Key and chunks of the small one, the big one's key and first two chunks; then the store goes.
      if (++appends === 5) throw new EventStoreUnavailableError('the store went away');
      return append(...args);
    });

    await expect(importer().run()).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(existsSync(join(dataDir, LEGACY_CONTENT_FILE))).toBe(true);
    expect(await store.readStream(contentStreamId('b-big'))).toHaveLength(2);
    jest.restoreAllMocks();

    expect(await importer().run()).toEqual({ imported: 1, present: 1, skipped: 0, mismatched: 0 });
    expect((await store.readStream(contentStreamId('b-big'))).map((e) => e.data.index)).toEqual([0, 1, 2, 3, 4]);
    expect((await contents.read('b-big', digest(big)))!.equals(big)).toBe(true);
    expect((await contents.read('a-small', digest(small)))!.equals(small)).toBe(true);
  });
});

import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { APP_CONFIG, type AppConfig, type CommandContext } from '@filing/platform';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import Database from 'better-sqlite3';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { DocumentAggregate } from '../document.aggregate';
import { type ContentDigest, ContentIntegrityError } from './content-chunks';
import { DocumentContentStore } from './document-content.store';

/** Where earlier versions kept the bytes, in DATA_DIR. */
export const LEGACY_CONTENT_FILE = 'documents.db';
/** What the file is renamed to once its content is in the event store (kept, not deleted, for the operator). */
export const IMPORTED_CONTENT_FILE = 'documents.db.imported';

export interface ImportReport {
  /** Content streams written. */
  readonly imported: number;
  /** Already in the store (an earlier, interrupted import). */
  readonly present: number;
  /** Orphans and deleted documents: nothing serves them. */
  readonly skipped: number;
  /** Bytes that are not what their document names: not imported, logged. */
  readonly mismatched: number;
}

/**
 * Moves document bytes from an earlier version's `DATA_DIR/documents.db` into content streams,
 * once, when the service starts (before it serves requests): each live document whose content
 * stream is still empty gets its bytes, checked against the SHA-256 its DocumentAdded names; then
 * the file is renamed `documents.db.imported`. Re-running is safe: complete streams are skipped, and
 * chunk ids are deterministic, so a partly written one is completed without doubling a chunk. A failure (the store unreachable) stops the start and leaves the
 * file in place for the next one, so no document is left without its bytes.
 */
@Injectable()
export class LegacyContentImport implements OnApplicationBootstrap {
  private readonly logger = new Logger(LegacyContentImport.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly contents: DocumentContentStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const report = await this.run();
    if (report)
      this.logger.log(
        `Imported document content from ${LEGACY_CONTENT_FILE} into the event store: ${JSON.stringify(report)}`,
      );
  }

  /** The import's counts, or null when there is no file to import. */
  async run(): Promise<ImportReport | null> {
    const file = join(this.config.dataDir, LEGACY_CONTENT_FILE);
    if (!existsSync(file)) return null;
    const counts = { imported: 0, present: 0, skipped: 0, mismatched: 0 };
    // Read-write, so a WAL left by the earlier version is read and folded back in at close.
    const db = new Database(file, { fileMustExist: true });
    try {
      const ids = db
        .prepare<[], { document_id: string }>('SELECT document_id FROM document_contents ORDER BY document_id')
        .all();
      const contentOf = db.prepare<[string], { content: Buffer }>(
        'SELECT content FROM document_contents WHERE document_id = ?',
      );
      const correlation_id = randomUUID();
      for (const { document_id } of ids) {
        // One content in memory at a time.
        counts[await this.importOne(document_id, () => contentOf.get(document_id)!.content, correlation_id)]++;
      }
    } finally {
      db.close();
    }
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(file + suffix))
        renameSync(file + suffix, join(this.config.dataDir, IMPORTED_CONTENT_FILE + suffix));
    }
    return counts;
  }

  private async importOne(
    documentId: string,
    content: () => Buffer,
    correlation_id: string,
  ): Promise<keyof ImportReport> {
    const { state } = await DocumentAggregate.load(this.store, documentId);
    if (!state || state.deleted) return 'skipped';
    if (await this.complete(documentId, state)) return 'present';
    const bytes = content();
    if (bytes.length !== state.size_bytes || createHash('sha256').update(bytes).digest('hex') !== state.sha256) {
      this.logger.error(
        `Not importing the content of document ${documentId}: it is not the ${state.size_bytes} bytes its DocumentAdded names`,
      );
      return 'mismatched';
    }
    const context: CommandContext = {
      account_id: state.account_id,
      actor: 'system:documents-import',
      correlation_id,
      causation_id: null,
    };
    await this.contents.write(context, documentId, bytes);
    // Deleted by another instance meanwhile: its DELETE removed nothing, so remove what was just written.
    if ((await DocumentAggregate.load(this.store, documentId)).state?.deleted) await this.contents.destroy(documentId);
    return 'imported';
  }

  /** Whether the content stream already holds all of it (a partial one is completed by `write`: same ids, same revisions). */
  private async complete(documentId: string, digest: ContentDigest): Promise<boolean> {
    try {
      return (await this.contents.read(documentId, digest)) !== null;
    } catch (err) {
      if (err instanceof ContentIntegrityError) return false;
      throw err;
    }
  }
}

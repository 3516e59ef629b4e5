import { cachedStatement, type Projection, type RecordedEnvelope, RegisterProjection } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { DOCUMENT_ADDED, DOCUMENT_DELETED, DOCUMENT_UPDATED, type DocumentEvent } from '../document.events';

/**
 * `documents`: one row per live document, scoped by account_id, with its metadata (the bytes
 * are in the content store, not here). A deleted document's row is removed, so every read
 * answers it as missing. The indexes serve the list: account, optionally one filter, then id.
 */
@Injectable()
@RegisterProjection()
export class DocumentsProjection implements Projection {
  readonly name = 'documents';
  readonly version = 1;
  readonly tables = ['documents'];
  readonly handles = ['documents.'];

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS documents (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        order_id TEXT,
        title TEXT NOT NULL,
        document_type TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS documents_by_account ON documents (account_id, id);
      CREATE INDEX IF NOT EXISTS documents_by_account_entity ON documents (account_id, entity_id, id);
      CREATE INDEX IF NOT EXISTS documents_by_account_order ON documents (account_id, order_id, id);
    `);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const e = event as RecordedEnvelope<DocumentEvent>;
    const { metadata } = e;
    const version = Number(e.revision);
    switch (e.type) {
      case DOCUMENT_ADDED:
        cachedStatement(
          db,
          `INSERT INTO documents (id, account_id, entity_id, order_id, title, document_type, content_type, size_bytes,
             sha256, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          e.data.document_id,
          metadata.account_id,
          e.data.entity_id,
          e.data.order_id,
          e.data.title,
          e.data.document_type,
          e.data.content_type,
          e.data.size_bytes,
          e.data.sha256,
          metadata.occurred_at,
          metadata.occurred_at,
          version,
        );
        return;
      case DOCUMENT_UPDATED:
        cachedStatement(db, 'UPDATE documents SET title = ?, document_type = ?, updated_at = ?, version = ? WHERE id = ?').run(
          e.data.title,
          e.data.document_type,
          metadata.occurred_at,
          version,
          e.data.document_id,
        );
        return;
      case DOCUMENT_DELETED:
        cachedStatement(db, 'DELETE FROM documents WHERE id = ?').run(e.data.document_id);
        return;
    }
  }
}

import { RegisterProjection, ResourceProjection, type ResourceTable } from '@filing/platform';
import { DOCUMENT_DELETED } from '../document.events';

/**
 * `documents`: one row per live document, scoped by account_id, with its metadata (the bytes
 * are in the content store, not here); listed by entity and order. A deleted document's row is
 * removed, so every read answers it as missing.
 */
export const DOCUMENTS_TABLE: ResourceTable = {
  name: 'documents',
  idField: 'document_id',
  filters: { entity: 'entity_id', order: 'order_id' },
  columns:
    'entity_id TEXT NOT NULL, order_id TEXT, title TEXT NOT NULL, document_type TEXT NOT NULL, ' +
    'content_type TEXT NOT NULL, size_bytes INTEGER NOT NULL, sha256 TEXT NOT NULL',
  deletedBy: DOCUMENT_DELETED,
};

@RegisterProjection()
export class DocumentsProjection extends ResourceProjection.of(DOCUMENTS_TABLE) {}

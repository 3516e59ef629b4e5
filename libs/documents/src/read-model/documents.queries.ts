import { cachedStatement, keysetPage, type Page, type PageRequest, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';

/** The resource as the API answers it (CONTRACT.md §3); the bytes are at `/documents/{id}/content`. */
export interface DocumentView {
  readonly id: string;
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly title: string;
  readonly document_type: string;
  readonly content_type: string;
  readonly size_bytes: number;
  readonly sha256: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface DocumentListFilters {
  readonly entity_id?: string;
  readonly order_id?: string;
}

type DocumentRow = DocumentView & { readonly account_id: string };

export const DOCUMENTS_COLLECTION = 'documents';

/** Reads of the `documents` read model, always within one account. Deleted documents are not in it. */
@Injectable()
export class DocumentsQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  get(accountId: string, id: string): DocumentView | null {
    // runner.db at every call: a replay may have swapped the database.
    const row = cachedStatement(this.runner.db, 'SELECT * FROM documents WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toDocumentView(row as DocumentRow) : null;
  }

  list(accountId: string, filters: DocumentListFilters, page: PageRequest<string>): Page<DocumentView> {
    return keysetPage<DocumentRow, DocumentView>(this.runner.db, {
      table: 'documents',
      where: [
        ['account_id = ?', accountId],
        ['entity_id = ?', filters.entity_id?.toLowerCase()],
        ['order_id = ?', filters.order_id?.toLowerCase()],
      ],
      page,
      collection: DOCUMENTS_COLLECTION,
      map: toDocumentView,
    });
  }
}

/** Exactly the API's fields, from a row or from the aggregate's state. */
export function toDocumentView(source: DocumentView): DocumentView {
  return {
    id: source.id,
    entity_id: source.entity_id,
    order_id: source.order_id,
    title: source.title,
    document_type: source.document_type,
    content_type: source.content_type,
    size_bytes: source.size_bytes,
    sha256: source.sha256,
    created_at: source.created_at,
    updated_at: source.updated_at,
    version: source.version,
  };
}

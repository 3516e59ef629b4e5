import { ResourceQueries, type ResourceView } from '@filing/platform';
import type { DocumentFields } from '../document.events';
import { DOCUMENTS_TABLE } from './documents.projection';

/** The resource as the API answers it (CONTRACT.md §3); the bytes are at `/documents/{id}/content`. */
export type DocumentView = ResourceView<DocumentFields>;

/** Reads of the `documents` read model, always within one account. Deleted documents are not in it. */
export class DocumentsQueries extends ResourceQueries.of<DocumentView, { entity_id?: string; order_id?: string }>(
  DOCUMENTS_TABLE,
) {}

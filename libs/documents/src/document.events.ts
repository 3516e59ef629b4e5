import type { DomainEvent } from '@filing/platform';

/**
 * The documents context's public contract: what other modules (webhooks) may depend on. Names
 * are explicit and stable; data is plain JSON. A change of meaning is a new schema version (the
 * aggregate's `schemaVersions`; all are 1 so far), and readers keep understanding the old ones.
 *
 * The document's events carry the content's SHA-256 and size, never the bytes: its stream is
 * shown in history and loaded for every write, and must not hold megabytes of base64. The bytes
 * are events too, in a content stream of their own (`documentcontent-<id>`), written before the
 * DocumentAdded that names them (docs/orders-and-documents.md).
 */
export const DOCUMENT_ADDED = 'documents.DocumentAdded';
export const DOCUMENT_UPDATED = 'documents.DocumentUpdated';
export const DOCUMENT_DELETED = 'documents.DocumentDeleted';

/** The document as a customer sees it. A type, not an interface: it must be JSON. */
export type DocumentFields = {
  readonly entity_id: string;
  /** The order the document belongs to, if any. */
  readonly order_id: string | null;
  readonly title: string;
  readonly document_type: string;
  /** The MIME type the content is served with, e.g. `application/pdf`. */
  readonly content_type: string;
  /** Size of the content in bytes. */
  readonly size_bytes: number;
  /** SHA-256 of the content, lower-case hex. */
  readonly sha256: string;
};

/** The fields every document event carries, as they are after the event (or, deleted, as it was). */
export const DOCUMENT_FIELDS: readonly (keyof DocumentFields)[] = [
  'entity_id',
  'order_id',
  'title',
  'document_type',
  'content_type',
  'size_bytes',
  'sha256',
];

export type DocumentAddedData = DocumentFields & { readonly document_id: string };
/** The document after the update, and the names of the fields this update changed. */
export type DocumentUpdatedData = DocumentFields & {
  readonly document_id: string;
  readonly changed: ('title' | 'document_type')[];
};
/** The document as it was when deleted (its content is gone with it). */
export type DocumentDeletedData = DocumentFields & { readonly document_id: string };

export type DocumentAdded = DomainEvent<typeof DOCUMENT_ADDED, DocumentAddedData>;
export type DocumentUpdated = DomainEvent<typeof DOCUMENT_UPDATED, DocumentUpdatedData>;
export type DocumentDeleted = DomainEvent<typeof DOCUMENT_DELETED, DocumentDeletedData>;
export type DocumentEvent = DocumentAdded | DocumentUpdated | DocumentDeleted;

/** Streams are `document-<id>`. */
export const DOCUMENT_STREAM_CONTEXT = 'document';

/**
 * One piece of a document's content in plaintext, as versions before content encryption wrote
 * it (`documentcontent-<id>`); read until `filing documents:encrypt` has moved it into an
 * encrypted content stream, never written any more. Its own type prefix, not `documents.`:
 * whatever follows the documents' events (the read model, the webhook fan-out's server-side
 * filter) never receives megabytes of content.
 */
export const DOCUMENT_CONTENT_CHUNK = 'documentcontent.ContentChunk';
export type DocumentContentChunkData = {
  readonly document_id: string;
  readonly index: number;
  /** Standard base64 of this piece's bytes. */
  readonly content_base64: string;
};
export type DocumentContentChunk = DomainEvent<typeof DOCUMENT_CONTENT_CHUNK, DocumentContentChunkData>;

/** Plaintext content streams of earlier versions: `documentcontent-<document id>`. */
export const DOCUMENT_CONTENT_STREAM_CONTEXT = 'documentcontent';

/**
 * One piece of a document's content, encrypted with the document's own data key (AES-256-GCM,
 * bound to the document id and the index: content/content-cipher.ts), in order from index 0.
 * Content streams are `documentcipher-<document id>`: every instance reads the bytes from the
 * store, and none can without the key.
 */
export const DOCUMENT_CIPHER_CHUNK = 'documentcipher.Chunk';
export type DocumentCipherChunkData = {
  readonly document_id: string;
  readonly index: number;
  /** Standard base64 of the 12-byte IV, the ciphertext and the 16-byte tag. */
  readonly ciphertext_base64: string;
};
export type DocumentCipherChunk = DomainEvent<typeof DOCUMENT_CIPHER_CHUNK, DocumentCipherChunkData>;
export const DOCUMENT_CIPHER_STREAM_CONTEXT = 'documentcipher';

/**
 * The document's data key, sealed under SECRETS_KEY (`keys.DataKeySealed`, platform's
 * KeyStreams): `documentkey-<document id>`. Deleting the document tombstones it.
 */
export const DOCUMENT_KEY_STREAM_CONTEXT = 'documentkey';

/**
 * An operator erased an account's personal data (`filing accounts:erase`): the data keys of these
 * documents and the signing secrets of these webhook endpoints are destroyed (live ones were
 * deleted first). Ids only: the history stays for audit.
 * Its own prefix: no read model or webhook follows it. Streams are `erasure-<account id>`.
 */
export const ACCOUNT_ERASED = 'erasure.AccountErased';
export type AccountErased = DomainEvent<
  typeof ACCOUNT_ERASED,
  { readonly account_id: string; readonly document_ids: string[]; readonly webhook_endpoint_ids: string[] }
>;
export const ERASURE_STREAM_CONTEXT = 'erasure';

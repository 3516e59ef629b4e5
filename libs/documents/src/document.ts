import {
  assertOwnedAtVersion,
  ConflictError,
  definedOnly,
  type FieldError,
  isUuid,
  type RecordedEnvelope,
  unknownFields,
  ValidationError,
} from '@filing/platform';
import {
  DOCUMENT_ADDED,
  DOCUMENT_DELETED,
  DOCUMENT_UPDATED,
  type DocumentEvent,
  type DocumentFields,
} from './document.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const MAX_CONTENT_BYTES = 10 * 1024 * 1024;
export const TITLE_MAX_LENGTH = 200;
export const DOCUMENT_TYPE_MAX_LENGTH = 100;
export const CONTENT_TYPE_MAX_LENGTH = 255;
export const WRITABLE_FIELDS = ['title', 'document_type'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];
const ADD_FIELDS = ['entity_id', 'order_id', 'title', 'document_type', 'content_type', 'size_bytes', 'sha256'] as const;

/**
 * A media type as RFC 9110 §8.3.1 / RFC 6838 §4.2 spell it: `type/subtype` of restricted-name
 * characters, then optional `; name=value` parameters (token or quoted string of printable
 * ASCII). No control characters, so it is safe to send back as a Content-Type header.
 */
const RESTRICTED_NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const QUOTED = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*"';
export const MEDIA_TYPE = new RegExp(`^${RESTRICTED_NAME}/${RESTRICTED_NAME}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The document as its stream tells it; null until it is added. A deleted one stays, marked. */
export type DocumentState = Document | null;
export interface Document extends DocumentFields {
  readonly id: string;
  readonly account_id: string;
  readonly deleted: boolean;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of the last event. */
  readonly version: number;
}
export const initialDocumentState: DocumentState = null;

/** What decide() needs of a new document: its metadata, the content already reduced to hash and size. */
export interface AddDocumentInput {
  readonly entity_id: string;
  readonly order_id?: string | null;
  readonly title: string;
  readonly document_type: string;
  readonly content_type: string;
  readonly size_bytes: number;
  readonly sha256: string;
}
export type DocumentChanges = { readonly [K in WritableField]?: string };

export type DocumentCommand =
  | { readonly kind: 'add'; readonly document_id: string; readonly account_id: string; readonly input: AddDocumentInput }
  | {
      readonly kind: 'update';
      readonly document_id: string;
      readonly account_id: string;
      readonly changes: DocumentChanges;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    }
  | { readonly kind: 'delete'; readonly document_id: string; readonly account_id: string; readonly expected_version?: number };

export function evolve(state: DocumentState, event: RecordedEnvelope<DocumentEvent>): DocumentState {
  const { metadata } = event;
  switch (event.type) {
    case DOCUMENT_ADDED:
      return {
        id: event.data.document_id,
        account_id: metadata.account_id ?? '',
        ...fieldsOf(event.data),
        deleted: false,
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
    case DOCUMENT_UPDATED:
    case DOCUMENT_DELETED:
      if (state === null) return state;
      return {
        ...state,
        ...fieldsOf(event.data),
        deleted: event.type === DOCUMENT_DELETED,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
  }
}

export function decide(state: DocumentState, command: DocumentCommand): DocumentEvent[] {
  if (command.kind === 'add') {
    if (state !== null) throw new ConflictError(`A document with id ${command.document_id} already exists`);
    const { input } = command;
    const errors = [...addErrors(input), ...unknownFields(input, ADD_FIELDS)];
    if (errors.length > 0) throw new ValidationError(errors);
    const fields: DocumentFields = { ...fieldsOf(input as DocumentFields), order_id: input.order_id ?? null };
    return [{ type: DOCUMENT_ADDED, data: { document_id: command.document_id, ...fields } }];
  }

  // A deleted document is answered like a missing one, on every route.
  const live = state?.deleted ? null : state;
  assertOwnedAtVersion(live, command, 'document', command.document_id);
  const current = { document_id: live.id, ...fieldsOf(live) };
  switch (command.kind) {
    case 'update': {
      const changes = definedOnly(command.changes);
      const errors = [...metadataErrors(changes), ...unknownFields(changes, WRITABLE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      const next = { ...current, ...changes };
      const changed = WRITABLE_FIELDS.filter((field) => field in changes && next[field] !== live[field]);
      // Nothing changes: nothing to record (the PATCH answers the document as it is).
      if (changed.length === 0) return [];
      return [{ type: DOCUMENT_UPDATED, data: { ...next, changed } }];
    }
    case 'delete':
      return [{ type: DOCUMENT_DELETED, data: current }];
  }
}

/** Every rule a new document's metadata breaks. */
export function addErrors(input: { readonly [K in keyof AddDocumentInput]?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  if (!isUuid(input.entity_id)) errors.push({ field: 'entity_id', message: 'entity_id must be a UUID' });
  if (input.order_id != null && !isUuid(input.order_id)) errors.push({ field: 'order_id', message: 'order_id must be a UUID' });
  errors.push(...metadataErrors({ title: input.title, document_type: input.document_type }, true));
  const contentType = contentTypeProblem(input.content_type);
  if (contentType) errors.push({ field: 'content_type', message: contentType });
  const size = sizeProblem(input.size_bytes);
  if (size) errors.push({ field: 'content_base64', message: size });
  // Computed by the service, never sent by a client: a bad one is a bug, reported all the same.
  if (typeof input.sha256 !== 'string' || !SHA256_HEX.test(input.sha256)) errors.push({ field: 'sha256', message: 'sha256 must be 64 hex digits' });
  return errors;
}

/** The rules of the writable fields present in `fields` (all of them when `required`). */
function metadataErrors(fields: { readonly title?: unknown; readonly document_type?: unknown }, required = false): FieldError[] {
  const errors: FieldError[] = [];
  if (required || fields.title !== undefined) {
    const problem = textProblem('title', fields.title, TITLE_MAX_LENGTH);
    if (problem) errors.push({ field: 'title', message: problem });
  }
  if (required || fields.document_type !== undefined) {
    const problem = textProblem('document_type', fields.document_type, DOCUMENT_TYPE_MAX_LENGTH);
    if (problem) errors.push({ field: 'document_type', message: problem });
  }
  return errors;
}

/** A required, non-blank string of at most `max` characters. */
export function textProblem(field: string, value: unknown, max: number): string | null {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (value.trim() === '') return `${field} must not be blank`;
  if (value.length > max) return `${field} must be at most ${max} characters`;
  return null;
}

export function contentTypeProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'content_type must be a string';
  if (value.length > CONTENT_TYPE_MAX_LENGTH || !MEDIA_TYPE.test(value)) {
    return 'content_type must be a media type like application/pdf or text/plain; charset=utf-8';
  }
  return null;
}

function sizeProblem(size: unknown): string | null {
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return 'content size must be a whole number of bytes';
  if (size === 0) return 'content_base64 must not be empty';
  if (size > MAX_CONTENT_BYTES) return `content must be at most ${MAX_CONTENT_BYTES} bytes (10 MiB) once decoded`;
  return null;
}

/**
 * `content_base64`: standard base64 (RFC 4648 §4) with padding, no whitespace or line breaks,
 * in its one canonical spelling, decoding to 1 byte … 10 MiB. Checked without decoding.
 */
export function base64Problem(value: unknown): string | null {
  if (typeof value !== 'string') return 'content_base64 must be a string of base64';
  if (value.length % 4 !== 0 || !BASE64.test(value) || !canonicalTail(value)) {
    return 'content_base64 must be standard base64 (A-Z, a-z, 0-9, +, /) with = padding and no whitespace';
  }
  return sizeProblem(decodedLength(value));
}

/** The number of bytes a valid base64 string decodes to. */
export function decodedLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/** Padding bits must be zero (`QQ==`, not `QR==`): one spelling per content. */
function canonicalTail(value: string): boolean {
  const tail = value.slice(-4);
  return Buffer.from(tail, 'base64').toString('base64') === tail;
}

function fieldsOf(source: DocumentFields): DocumentFields {
  return {
    entity_id: source.entity_id,
    order_id: source.order_id,
    title: source.title,
    document_type: source.document_type,
    content_type: source.content_type,
    size_bytes: source.size_bytes,
    sha256: source.sha256,
  };
}

import {
  assertCreatable,
  type CreateCommand,
  assertOwnedAtVersion,
  decidePatch,
  type ExistingResourceCommand,
  type FieldError,
  fieldProblems,
  orNull,
  type PatchCommand,
  pickFields,
  type RecordedEnvelope,
  type Resource,
  resourceEvolver,
  resourceIdRule,
  textRule,
  unknownFields,
  extend,
} from '@filing/platform';
import {
  DOCUMENT_ADDED,
  DOCUMENT_DELETED,
  DOCUMENT_FIELDS,
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
export const MEDIA_TYPE = new RegExp(
  `^${RESTRICTED_NAME}/${RESTRICTED_NAME}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`,
);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The document as its stream tells it; null until it is added. A deleted one stays, marked. */
export type Document = Resource<DocumentFields> & { readonly deleted: boolean };
export type DocumentState = Document | null;
export const initialDocumentState: DocumentState = null;

/** What decide() needs of a new document: its metadata, the content already reduced to hash and size. */
export type AddDocumentInput = Omit<DocumentFields, 'order_id'> & { readonly order_id?: string | null };
export type DocumentChanges = { readonly [K in WritableField]?: string };
export type DocumentCommand =
  | CreateCommand<'add', AddDocumentInput>
  | PatchCommand<DocumentChanges>
  | ({ readonly kind: 'delete' } & ExistingResourceCommand);

const evolveFields = resourceEvolver<DocumentFields, DocumentEvent>(DOCUMENT_ADDED, 'document_id', DOCUMENT_FIELDS);

export function evolve(state: DocumentState, event: RecordedEnvelope<DocumentEvent>): DocumentState {
  const next = evolveFields(state, event);
  return next && extend(next, { deleted: event.type === DOCUMENT_DELETED });
}

export function decide(state: DocumentState, command: DocumentCommand): DocumentEvent[] {
  if (command.kind === 'add') {
    const { input } = command;
    assertCreatable(state, 'document', command.id, [...addErrors(input), ...unknownFields(input, ADD_FIELDS)]);
    const fields: DocumentFields = extend(pickFields(input as DocumentFields, DOCUMENT_FIELDS), {
      order_id: input.order_id ?? null,
    });
    return [{ type: DOCUMENT_ADDED, data: { document_id: command.id, ...fields } }];
  }
  // A deleted document is answered like a missing one, on every route.
  const live = state?.deleted ? null : state;
  if (command.kind === 'update') {
    const rules = { fields: DOCUMENT_FIELDS, writable: WRITABLE_FIELDS, fieldErrors: metadataErrors };
    const { next, changed } = decidePatch(live, command, 'document', rules);
    // Nothing changes: nothing to record (the PATCH answers the document as it is).
    return changed.length === 0
      ? []
      : [{ type: DOCUMENT_UPDATED, data: { document_id: command.id, ...next, changed } }];
  }
  assertOwnedAtVersion(live, command, 'document', command.id);
  return [{ type: DOCUMENT_DELETED, data: { document_id: live.id, ...pickFields(live, DOCUMENT_FIELDS) } }];
}

export const titleProblem = textRule('title', TITLE_MAX_LENGTH);
export const documentTypeProblem = textRule('document_type', DOCUMENT_TYPE_MAX_LENGTH);

/** The rules of the writable fields present in `fields`. */
function metadataErrors(fields: object): FieldError[] {
  return fieldProblems(fields, { title: titleProblem, document_type: documentTypeProblem });
}

/** Every rule a new document's metadata breaks; an absent required field is refused like a bad one. */
export function addErrors(input: { readonly [K in keyof AddDocumentInput]?: unknown }): FieldError[] {
  const required = (field: keyof AddDocumentInput) => input[field] ?? null;
  const fields = {
    entity_id: required('entity_id'),
    order_id: input.order_id,
    title: required('title'),
    document_type: required('document_type'),
    content_type: required('content_type'),
    // The client sent the content, not its size: a bad size names content_base64.
    content_base64: required('size_bytes'),
    sha256: required('sha256'),
  };
  return fieldProblems(fields, {
    entity_id: resourceIdRule('entity_id'),
    order_id: orNull(resourceIdRule('order_id')),
    title: titleProblem,
    document_type: documentTypeProblem,
    content_type: contentTypeProblem,
    content_base64: sizeProblem,
    // Computed by the service, never sent by a client: a bad one is a bug, reported all the same.
    sha256: (value) => (typeof value === 'string' && SHA256_HEX.test(value) ? null : 'sha256 must be 64 hex digits'),
  });
}

export function contentTypeProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'content_type must be a string';
  if (value.length > CONTENT_TYPE_MAX_LENGTH || !MEDIA_TYPE.test(value)) {
    return 'content_type must be a media type like application/pdf or text/plain; charset=utf-8';
  }
  return null;
}

function sizeProblem(size: unknown): string | null {
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    return 'content size must be a whole number of bytes';
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

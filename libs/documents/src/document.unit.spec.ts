import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import { DeciderSpecification, expectOwnershipBeforeIfMatch } from '@filing/platform/testing';
import {
  base64Problem,
  contentTypeProblem,
  decide,
  decodedLength,
  type DocumentCommand,
  evolve,
  initialDocumentState,
  MAX_CONTENT_BYTES,
} from './document';
import {
  DOCUMENT_ADDED,
  DOCUMENT_DELETED,
  DOCUMENT_UPDATED,
  type DocumentAdded,
  type DocumentDeleted,
  type DocumentFields,
} from './document.events';

const ID = '0193a5b2-0000-7000-8000-000000000001';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ORDER = '0193a5b2-0000-7000-8000-0000000000f1';
const ACCOUNT = 'acc-1';
const SHA = 'a'.repeat(64);

const given = DeciderSpecification.for(
  { decide, evolve, initialState: initialDocumentState },
  { streamId: `document-${ID}`, accountId: ACCOUNT },
);

const valid = {
  entity_id: ENTITY,
  title: 'Certificate',
  document_type: 'certificate',
  content_type: 'application/pdf',
  size_bytes: 3,
  sha256: SHA,
};
const add = (input: Record<string, unknown> = {}): DocumentCommand =>
  ({ kind: 'add', id: ID, account_id: ACCOUNT, input: { ...valid, ...input } }) as unknown as DocumentCommand;
const update = (changes: Record<string, unknown>, account = ACCOUNT, expected_version?: number): DocumentCommand =>
  ({ kind: 'update', id: ID, account_id: account, changes, expected_version }) as unknown as DocumentCommand;
const remove = (account = ACCOUNT, expected_version?: number): DocumentCommand => ({
  kind: 'delete',
  id: ID,
  account_id: account,
  expected_version,
});

const fields: DocumentFields = { ...valid, order_id: null };
const added: DocumentAdded = { type: DOCUMENT_ADDED, data: { document_id: ID, ...fields } };
const deleted: DocumentDeleted = { type: DOCUMENT_DELETED, data: { document_id: ID, ...fields } };

describe('document: add', () => {
  it('records the metadata with the content hash and size, and an order_id of null when none is given', () => {
    given([]).when(add()).then(added);
    given([])
      .when(add())
      .thenState({
        id: ID,
        account_id: ACCOUNT,
        ...fields,
        deleted: false,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 0,
      });
    given([])
      .when(add({ order_id: ORDER }))
      .thenState((state) => expect(state).toMatchObject({ order_id: ORDER }));
  });

  it("lists every broken rule at once, naming content_base64 for the content's size", () => {
    given([])
      .when(
        add({
          entity_id: 'x',
          order_id: 'y',
          title: ' ',
          document_type: 5,
          content_type: 'pdf',
          size_bytes: MAX_CONTENT_BYTES + 1,
        }),
      )
      .thenInvalid(['entity_id', 'order_id', 'title', 'document_type', 'content_type', 'content_base64']);
    given([])
      .when(add({ size_bytes: 0 }))
      .thenInvalid(['content_base64']);
    given([])
      .when(add({ title: 'x'.repeat(201), document_type: 'x'.repeat(101) }))
      .thenInvalid(['title', 'document_type']);
    given([])
      .when(add({ sha256: 'nope', content_base64: 'AAAA' }))
      .thenInvalid(['sha256', 'content_base64']);
  });

  it('accepts the limits exactly', () => {
    given([])
      .when(add({ size_bytes: MAX_CONTENT_BYTES, title: 'x'.repeat(200), document_type: 'x'.repeat(100) }))
      .then((events) => expect(events).toHaveLength(1));
  });

  it('refuses to add a document that exists', () => {
    given(added).when(add()).thenThrows(ConflictError);
  });
});

describe('document: update', () => {
  it('records the document after the update and the fields that changed', () => {
    given(added)
      .when(update({ title: 'Renamed', document_type: 'certificate' }))
      .then({ type: DOCUMENT_UPDATED, data: { document_id: ID, ...fields, title: 'Renamed', changed: ['title'] } });
    given(added)
      .when(update({ document_type: 'other' }))
      .thenState(
        (state) =>
          expect(state).toMatchObject({ document_type: 'other', updated_at: '2026-01-02T00:00:00.000Z', version: 1 }),
        '2026-01-02T00:00:00.000Z',
      );
  });

  it('decides nothing when nothing changes', () => {
    given(added).when(update({})).thenNothingHappened();
    given(added)
      .when(update({ title: 'Certificate', document_type: undefined }))
      .thenNothingHappened();
  });

  it('refuses bad values, null, and fields that cannot change, listing each', () => {
    given(added)
      .when(update({ title: null, document_type: '', content_type: 'text/plain', sha256: SHA }))
      .thenInvalid(['title', 'document_type', 'content_type', 'sha256']);
  });
});

describe('document: delete', () => {
  it('records the document as it was, and leaves it deleted', () => {
    given(added).when(remove()).then(deleted);
    given(added)
      .when(remove())
      .thenState((state) => expect(state).toMatchObject({ deleted: true, version: 1 }));
  });

  it('answers a deleted document as missing to every later command', () => {
    given([added, deleted]).when(remove()).thenThrows(NotFoundError);
    given([added, deleted])
      .when(update({ title: 'Back' }))
      .thenThrows(NotFoundError);
    given([added, deleted]).when(remove(ACCOUNT, 1)).thenThrows(NotFoundError);
    given([added, deleted]).when(add()).thenThrows(ConflictError);
  });
});

describe('document: ownership and If-Match', () => {
  it("answers a missing document, or another account's, as not found, whatever version it asks for", () => {
    expectOwnershipBeforeIfMatch(given, [added], (account, version) => update({ title: 'B' }, account, version), {
      owner: ACCOUNT,
      version: 0,
    });
    expectOwnershipBeforeIfMatch(given, [added], remove, { owner: ACCOUNT, version: 0 });
  });

  it('refuses another version, even for a no-op', () => {
    given(added)
      .when(update({}, ACCOUNT, 1))
      .thenThrows(PreconditionFailedError);
    given(added).when(remove(ACCOUNT, 1)).thenThrows(PreconditionFailedError);
    given(added).when(remove(ACCOUNT, 0)).then(deleted);
  });
});

describe('content rules', () => {
  it.each(['QQ==', 'QUI=', 'QUJD', 'AAECAwQF/+/+', Buffer.alloc(256, 7).toString('base64')])(
    '%s is content_base64',
    (text) => expect(base64Problem(text)).toBeNull(),
  );
  it.each([
    ['', 'empty'],
    ['QQ', 'unpadded'],
    ['QR==', 'non-zero padding bits'],
    ['QU JD', 'a space'],
    ['QUJD\n', 'a line break'],
    ['QU=D', 'padding inside'],
    ['QUJD====', 'too much padding'],
    ['-_-_', 'base64url'],
    ['QUJD!', 'a stray character'],
  ])('%j is not (%s)', (text) => expect(base64Problem(text)).not.toBeNull());
  it('refuses a non-string', () => expect(base64Problem(123)).toMatch(/string/));

  it('measures the decoded size without decoding, and bounds it at 10 MiB', () => {
    expect([decodedLength('QQ=='), decodedLength('QUI='), decodedLength('QUJD')]).toEqual([1, 2, 3]);
    const limit = Buffer.alloc(MAX_CONTENT_BYTES).toString('base64');
    expect(base64Problem(limit)).toBeNull();
    expect(base64Problem(Buffer.alloc(MAX_CONTENT_BYTES + 1).toString('base64'))).toMatch(/10 MiB/);
  });

  it.each([
    'application/pdf',
    'text/plain; charset=utf-8',
    'image/svg+xml',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'text/plain;format="flowed"',
  ])('%s is a content type', (type) => expect(contentTypeProblem(type)).toBeNull());
  it.each([
    'pdf',
    'application/',
    '/pdf',
    'text/plain; charset',
    'text/html\r\nX-Evil: 1',
    'text/plain; a="é"',
    'a b/c',
    `application/${'x'.repeat(300)}`,
    7,
  ])('%j is not', (type) => expect(contentTypeProblem(type)).not.toBeNull());
});

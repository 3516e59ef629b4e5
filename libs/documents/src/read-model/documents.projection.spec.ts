import { CursorCodec, type ProjectionRunner, type RecordedEnvelope } from '@filing/platform';
import { recorded } from '@filing/platform/testing';
import Database from 'better-sqlite3';
import {
  DOCUMENT_ADDED, DOCUMENT_DELETED, DOCUMENT_UPDATED, type DocumentAddedData, type DocumentEvent,
} from '../document.events';
import { DocumentsProjection } from './documents.projection';
import { DocumentsQueries } from './documents.queries';

const cursors = CursorCodec.random();

let position = 0;
const stored = (event: DocumentEvent, account: string, occurredAt: string, revision = 0): RecordedEnvelope =>
  recorded(event, { streamId: `document-${event.data.document_id}`, revision, occurredAt, accountId: account, position: position++ });

const doc = (document_id: string, entity_id: string, order_id: string | null): DocumentAddedData => ({
  document_id,
  entity_id,
  order_id,
  title: `Title ${document_id}`,
  document_type: 'certificate',
  content_type: 'application/pdf',
  size_bytes: 42,
  sha256: 'f'.repeat(64),
});

describe('documents read model', () => {
  let db: Database.Database;
  let queries: DocumentsQueries;
  const projection = new DocumentsProjection();
  const at = '2026-01-01T00:00:00.000Z';
  const later = '2026-01-02T00:00:00.000Z';

  beforeEach(() => {
    db = new Database(':memory:');
    projection.setup(db);
    queries = new DocumentsQueries({ db } as unknown as ProjectionRunner);
    for (const [id, entity, order, account] of [
      ['d1', 'e1', null, 'a'],
      ['d2', 'e1', 'o1', 'a'],
      ['d3', 'e2', 'o1', 'a'],
      ['d4', 'e1', null, 'b'],
      ['d5', 'e1', 'o1', 'a'],
    ] as const) {
      projection.apply(db, stored({ type: DOCUMENT_ADDED, data: doc(id, entity, order) }, account, at));
    }
    projection.apply(
      db,
      stored({ type: DOCUMENT_UPDATED, data: { ...doc('d2', 'e1', 'o1'), title: 'Renamed', changed: ['title'] } }, 'a', later, 1),
    );
    projection.apply(db, stored({ type: DOCUMENT_DELETED, data: doc('d5', 'e1', 'o1') }, 'a', later, 1));
  });
  afterEach(() => db.close());

  it('keeps each document as of its last event, with version and times', () => {
    expect(queries.get('a', 'd2')).toEqual({
      id: 'd2',
      entity_id: 'e1',
      order_id: 'o1',
      title: 'Renamed',
      document_type: 'certificate',
      content_type: 'application/pdf',
      size_bytes: 42,
      sha256: 'f'.repeat(64),
      created_at: at,
      updated_at: later,
      version: 1,
    });
  });

  it('forgets a deleted document', () => {
    expect(queries.get('a', 'd5')).toBeNull();
    expect(queries.list('a', { order_id: 'o1' }, { limit: 50, after: null, cursors }).data.map((d) => d.id)).toEqual(['d2', 'd3']);
  });

  it('answers only within the account', () => {
    expect(queries.get('b', 'd1')).toBeNull();
    expect(queries.list('b', {}, { limit: 50, after: null, cursors }).data.map((d) => d.id)).toEqual(['d4']);
  });

  it('filters by entity and order, and pages', () => {
    const page = queries.list('a', {}, { limit: 2, after: null, cursors });
    expect(page.data.map((d) => d.id)).toEqual(['d1', 'd2']);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'documents', k: 'd2' });
    expect(queries.list('a', {}, { limit: 2, after: 'd2', cursors })).toEqual({ data: [expect.objectContaining({ id: 'd3' })], next_cursor: null });
    expect(queries.list('a', { entity_id: 'e1' }, { limit: 50, after: null, cursors }).data.map((d) => d.id)).toEqual(['d1', 'd2']);
    expect(queries.list('a', { entity_id: 'e1', order_id: 'o1' }, { limit: 50, after: null, cursors }).data.map((d) => d.id)).toEqual(['d2']);
  });
});

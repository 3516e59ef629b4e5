import { type ReadModelFixture, readModelFixture } from '@filing/platform/testing';
import { DOCUMENT_ADDED, DOCUMENT_DELETED, DOCUMENT_UPDATED, type DocumentAddedData } from '../document.events';
import { DocumentsProjection } from './documents.projection';
import { DocumentsQueries } from './documents.queries';

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
  let model: ReadModelFixture<DocumentsQueries>;
  const at = '2026-01-01T00:00:00.000Z';
  const later = '2026-01-02T00:00:00.000Z';

  beforeEach(() => {
    model = readModelFixture(new DocumentsProjection(), (runner) => new DocumentsQueries(runner));
    for (const [id, entity, order, accountId] of [
      ['d1', 'e1', null, 'a'],
      ['d2', 'e1', 'o1', 'a'],
      ['d3', 'e2', 'o1', 'a'],
      ['d4', 'e1', null, 'b'],
      ['d5', 'e1', 'o1', 'a'],
    ] as const) {
      model.apply({ type: DOCUMENT_ADDED, data: doc(id, entity, order) }, { accountId, occurredAt: at });
    }
    const second = { accountId: 'a', revision: 1, occurredAt: later };
    model.apply(
      { type: DOCUMENT_UPDATED, data: { ...doc('d2', 'e1', 'o1'), title: 'Renamed', changed: ['title'] } },
      second,
    );
    model.apply({ type: DOCUMENT_DELETED, data: doc('d5', 'e1', 'o1') }, second);
  });
  afterEach(() => model.close());

  it('keeps each document as of its last event, with version and times', () => {
    const { document_id, ...fields } = doc('d2', 'e1', 'o1');
    expect(model.queries.get('a', document_id)).toEqual({
      id: document_id,
      ...fields,
      title: 'Renamed',
      created_at: at,
      updated_at: later,
      version: 1,
    });
  });

  it('forgets a deleted document', () => {
    expect(model.queries.get('a', 'd5')).toBeNull();
    expect(model.ids('a', { order_id: 'o1' })).toEqual(['d2', 'd3']);
  });

  it('answers only within the account', () => {
    expect(model.queries.get('b', 'd1')).toBeNull();
    expect(model.ids('b')).toEqual(['d4']);
  });

  it('filters by entity and order, and pages', () => {
    model.expectPages('a', ['d1', 'd2', 'd3'], 2);
    expect(model.ids('a', { entity_id: 'e1' })).toEqual(['d1', 'd2']);
    expect(model.ids('a', { entity_id: 'e1', order_id: 'o1' })).toEqual(['d2']);
  });
});

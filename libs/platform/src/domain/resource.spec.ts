import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from '../errors/domain-errors';
import type { DomainEvent } from '../events/envelope';
import { recorded, validationFields } from '../testing/domain';
import { fieldProblems, oneOfRule } from './field-rules';
import { assertCreatable, decidePatch, pickFields, type Resource, resourceEvolver } from './resource';

type Fields = { readonly title: string; readonly status: string; readonly entity_id: string };
type NoteEvent = DomainEvent<'notes.Created' | 'notes.Updated', Fields & { note_id: string; changed?: string[] }>;
const FIELDS = ['title', 'status', 'entity_id'] as const;

const evolve = resourceEvolver<Fields, NoteEvent>('notes.Created', 'note_id', FIELDS);
const at = (event: NoteEvent, revision: number, occurredAt: string) =>
  recorded(event, { streamId: 'note-n1', revision, occurredAt, accountId: 'acc-1' });
const data = { note_id: 'n1', title: 'A', status: 'open', entity_id: 'e1' };

describe('resource domain helpers', () => {
  const note: Resource<Fields> = {
    id: 'n1',
    account_id: 'acc-1',
    title: 'A',
    status: 'open',
    entity_id: 'e1',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    version: 0,
  };

  it('evolves a resource from events that carry its fields as they are after each one', () => {
    expect(evolve(null, at({ type: 'notes.Created', data }, 0, note.created_at))).toEqual(note);
    const updated = at(
      { type: 'notes.Updated', data: { ...data, status: 'done', changed: ['status'] } },
      1,
      '2026-01-02T00:00:00.000Z',
    );
    expect(evolve(note, updated)).toEqual({
      ...note,
      status: 'done',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
    expect(evolve(null, updated)).toBeNull();
    expect(pickFields({ ...data, changed: [] }, FIELDS)).toEqual({ title: 'A', status: 'open', entity_id: 'e1' });
  });

  it('refuses a create on a taken id (409) before its field errors (400)', () => {
    expect(() => assertCreatable(note, 'entity', 'n1', [])).toThrow(
      new ConflictError('An entity with id n1 already exists'),
    );
    expect(() => assertCreatable(note, 'task', 'n1', [{ field: 'title', message: 'x' }])).toThrow(
      'A task with id n1 already exists',
    );
    expect(() => assertCreatable(null, 'task', 'n1', [{ field: 'title', message: 'x' }])).toThrow(ValidationError);
    expect(() => assertCreatable(null, 'task', 'n1', [])).not.toThrow();
  });

  describe('decidePatch', () => {
    const rules = {
      fields: FIELDS,
      writable: ['title', 'status'] as const,
      fieldErrors: (f: object) => fieldProblems(f, { status: oneOfRule('status', ['open', 'done']) }),
    };
    const patch = (changes: object, account_id = 'acc-1', expected_version?: number) =>
      decidePatch(note, { kind: 'update', id: 'n1', account_id, changes, expected_version }, 'note', rules);

    it('answers the fields after the change and the names of those that differ', () => {
      expect(patch({ status: 'done', title: 'A', entity_id: undefined })).toEqual({
        next: { title: 'A', status: 'done', entity_id: 'e1' },
        changed: ['status'],
      });
      expect(patch({}).changed).toEqual([]);
    });

    it('checks ownership, then If-Match, then every bad or unwritable field at once', () => {
      expect(() =>
        decidePatch<Fields, 'title' | 'status'>(
          null,
          { kind: 'update', id: 'n1', account_id: 'acc-1', changes: {} },
          'note',
          rules,
        ),
      ).toThrow(NotFoundError);
      expect(() => patch({ status: 'nope' }, 'acc-2', 5)).toThrow(NotFoundError);
      expect(() => patch({ status: 'nope' }, 'acc-1', 5)).toThrow(PreconditionFailedError);
      expect(validationFields(() => patch({ status: 'nope', entity_id: 'e2', id: 'x' }))).toEqual([
        'status',
        'entity_id',
        'id',
      ]);
    });
  });
});

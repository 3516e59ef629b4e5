import { CursorCodec, type ProjectionRunner } from '@filing/platform';
import Database from 'better-sqlite3';
import { recorded } from '@filing/platform/testing';
import { TASK_CREATED, TASK_UPDATED, type TaskEvent, type TaskFields } from '../task.events';
import { TasksProjection } from './tasks.projection';
import { TasksQueries } from './tasks.queries';

const cursors = CursorCodec.random();

const E1 = '0193a5b2-0000-7000-8000-0000000000e1';
const E2 = '0193a5b2-0000-7000-8000-0000000000e2';

const fields = (entity_id: string, title: string): TaskFields => ({ entity_id, title, description: null, due_date: null, status: 'open' });

describe('tasks read model', () => {
  let db: Database.Database;
  let queries: TasksQueries;
  const projection = new TasksProjection();

  beforeEach(() => {
    db = new Database(':memory:');
    projection.setup(db);
    queries = new TasksQueries({ db } as unknown as ProjectionRunner);
    const events: [TaskEvent, string, number, string][] = [
      [{ type: TASK_CREATED, data: { task_id: 't1', ...fields(E1, 'One') } }, 'a', 0, '2026-01-01T00:00:00.000Z'],
      [{ type: TASK_CREATED, data: { task_id: 't2', ...fields(E1, 'Two') } }, 'a', 0, '2026-01-01T00:00:00.000Z'],
      [{ type: TASK_CREATED, data: { task_id: 't3', ...fields(E2, 'Three') } }, 'a', 0, '2026-01-01T00:00:00.000Z'],
      [{ type: TASK_CREATED, data: { task_id: 't4', ...fields(E1, 'Foreign') } }, 'b', 0, '2026-01-01T00:00:00.000Z'],
      [
        {
          type: TASK_UPDATED,
          data: { task_id: 't2', ...fields(E1, 'Two'), description: 'Done', due_date: '2026-02-01', status: 'completed', changed: ['description', 'due_date', 'status'] },
        },
        'a',
        1,
        '2026-01-02T00:00:00.000Z',
      ],
    ];
    events.forEach(([event, accountId, revision, occurredAt], position) =>
      projection.apply(db, recorded(event, { streamId: `task-${event.data.task_id}`, revision, occurredAt, accountId, position })),
    );
  });
  afterEach(() => db.close());

  it('keeps each task as of its last event, with version and times', () => {
    expect(queries.get('a', 't2')).toEqual({
      id: 't2',
      entity_id: E1,
      title: 'Two',
      description: 'Done',
      due_date: '2026-02-01',
      status: 'completed',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('answers only within the account', () => {
    expect(queries.get('b', 't2')).toBeNull();
    expect(queries.get('a', 't4')).toBeNull();
    expect(queries.list('b', {}, { limit: 50, after: null, cursors }).data.map((t) => t.id)).toEqual(['t4']);
  });

  it('filters by entity and status (an entity id in capitals too), and pages', () => {
    const page = queries.list('a', {}, { limit: 2, after: null, cursors });
    expect(page.data.map((t) => t.id)).toEqual(['t1', 't2']);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'tasks', k: 't2' });
    expect(queries.list('a', {}, { limit: 2, after: 't2', cursors })).toEqual({ data: [expect.objectContaining({ id: 't3' })], next_cursor: null });
    expect(queries.list('a', { entity_id: E1.toUpperCase() }, { limit: 50, after: null, cursors }).data.map((t) => t.id)).toEqual(['t1', 't2']);
    expect(queries.list('a', { status: 'open' }, { limit: 50, after: null, cursors }).data.map((t) => t.id)).toEqual(['t1', 't3']);
    expect(queries.list('a', { entity_id: E1, status: 'completed' }, { limit: 50, after: null, cursors }).data.map((t) => t.id)).toEqual(['t2']);
  });
});

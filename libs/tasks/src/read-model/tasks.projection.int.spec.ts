import { type ReadModelFixture, readModelFixture } from '@filing/platform/testing';
import { TASK_CREATED, TASK_UPDATED, type TaskFields } from '../task.events';
import { TasksProjection } from './tasks.projection';
import { TasksQueries } from './tasks.queries';

const E1 = '0193a5b2-0000-7000-8000-0000000000e1';
const E2 = '0193a5b2-0000-7000-8000-0000000000e2';

const fields = (entity_id: string, title: string): TaskFields => ({
  entity_id,
  title,
  description: null,
  due_date: null,
  status: 'open',
});

describe('tasks read model', () => {
  let model: ReadModelFixture<TasksQueries>;

  beforeEach(() => {
    model = readModelFixture(new TasksProjection(), (runner) => new TasksQueries(runner));
    model.apply({ type: TASK_CREATED, data: { task_id: 't1', ...fields(E1, 'One') } }, { accountId: 'a' });
    model.apply({ type: TASK_CREATED, data: { task_id: 't2', ...fields(E1, 'Two') } }, { accountId: 'a' });
    model.apply({ type: TASK_CREATED, data: { task_id: 't3', ...fields(E2, 'Three') } }, { accountId: 'a' });
    model.apply({ type: TASK_CREATED, data: { task_id: 't4', ...fields(E1, 'Foreign') } }, { accountId: 'b' });
    const done = { description: 'Done', due_date: '2026-02-01', status: 'completed' } as const;
    const changed: (keyof typeof done)[] = ['description', 'due_date', 'status'];
    model.apply(
      { type: TASK_UPDATED, data: { task_id: 't2', ...fields(E1, 'Two'), ...done, changed } },
      { accountId: 'a', revision: 1, occurredAt: '2026-01-02T00:00:00.000Z' },
    );
  });
  afterEach(() => model.close());

  it('keeps each task as of its last event, with version and times', () => {
    const times = { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z' };
    expect(model.queries.get('a', 't2')).toEqual({
      id: 't2',
      ...fields(E1, 'Two'),
      description: 'Done',
      due_date: '2026-02-01',
      status: 'completed',
      ...times,
      version: 1,
    });
  });

  it('answers only within the account', () => {
    expect(model.queries.get('b', 't2')).toBeNull();
    expect(model.queries.get('a', 't4')).toBeNull();
    expect(model.ids('b')).toEqual(['t4']);
  });

  it('filters by entity and status (an entity id in capitals too), and pages', () => {
    model.expectPages('a', ['t1', 't2', 't3'], 2);
    expect(model.ids('a', { entity_id: E1.toUpperCase() })).toEqual(['t1', 't2']);
    expect(model.ids('a', { status: 'open' })).toEqual(['t1', 't3']);
    expect(model.ids('a', { entity_id: E1, status: 'completed' })).toEqual(['t2']);
  });
});

import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import { decideThenEvolve, validationFields } from '../../platform/src/testing/domain';
import { decide, descriptionProblem, evolve, initialTaskState, type TaskCommand, titleProblem } from './task';
import { TASK_CREATED, TASK_UPDATED } from './task.events';

const ID = '0193a5b2-0000-7000-8000-0000000000f1';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';

const run = decideThenEvolve({ decide, evolve }, `task-${ID}`, ACCOUNT);
const create = (input: Record<string, unknown>): TaskCommand =>
  ({ kind: 'create', task_id: ID, account_id: ACCOUNT, input }) as unknown as TaskCommand;
const update = (changes: Record<string, unknown>, account = ACCOUNT, expected_version?: number): TaskCommand =>
  ({ kind: 'update', task_id: ID, account_id: account, changes, expected_version }) as unknown as TaskCommand;

const created = () => run(initialTaskState, create({ entity_id: ENTITY, title: 'File the annual report' }));

describe('task: create', () => {
  it('creates an open task with version 0 and null optional fields, its data carrying id, entity and status', () => {
    expect(decide(initialTaskState, create({ entity_id: ENTITY, title: 'File the annual report' }))).toEqual([
      {
        type: TASK_CREATED,
        data: { task_id: ID, entity_id: ENTITY, title: 'File the annual report', description: null, due_date: null, status: 'open' },
      },
    ]);
    expect(created()).toEqual({
      id: ID,
      account_id: ACCOUNT,
      entity_id: ENTITY,
      title: 'File the annual report',
      description: null,
      due_date: null,
      status: 'open',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      version: 0,
    });
  });

  it('keeps a description (empty too) and a due date', () => {
    expect(run(null, create({ entity_id: ENTITY, title: 'T', description: 'Before March', due_date: '2028-02-29' }))).toMatchObject({
      description: 'Before March',
      due_date: '2028-02-29',
    });
    expect(run(null, create({ entity_id: ENTITY, title: 'T', description: '' }))).toMatchObject({ description: '' });
  });

  it('lists every broken rule at once', () => {
    expect(validationFields(() => decide(null, create({})))).toEqual(['entity_id', 'title']);
    expect(
      validationFields(() => decide(null, create({ entity_id: 'e1', title: ' ', description: 5, due_date: '2023-02-29', status: 'completed' }))),
    ).toEqual(['entity_id', 'title', 'description', 'due_date', 'status']);
    expect(validationFields(() => decide(null, create({ entity_id: ENTITY, title: 'x'.repeat(201), description: 'd'.repeat(5001) })))).toEqual([
      'title',
      'description',
    ]);
    expect(validationFields(() => decide(null, create({ entity_id: null, title: null, id: ID })))).toEqual(['entity_id', 'title', 'id']);
  });

  it('accepts a title of exactly 200 characters and a description of 5000', () => {
    expect(decide(null, create({ entity_id: ENTITY, title: 'x'.repeat(200), description: 'd'.repeat(5000) }))).toHaveLength(1);
  });

  it('refuses to create a task that exists', () => {
    expect(() => decide(created(), create({ entity_id: ENTITY, title: 'Again' }))).toThrow(ConflictError);
  });
});

describe('task: update', () => {
  it('records the task after the update and the fields that changed', () => {
    const state = created();
    expect(decide(state, update({ status: 'completed', title: 'File the annual report', due_date: undefined }))).toEqual([
      {
        type: TASK_UPDATED,
        data: {
          task_id: ID,
          entity_id: ENTITY,
          title: 'File the annual report',
          description: null,
          due_date: null,
          status: 'completed',
          changed: ['status'],
        },
      },
    ]);
    expect(run(state, update({ status: 'completed' }), '2026-01-02T00:00:00.000Z')).toMatchObject({
      status: 'completed',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('sets and clears the optional fields, and reopens a completed task', () => {
    const set = run(created(), update({ title: 'T2', description: 'More', due_date: '2027-01-31', status: 'completed' }));
    expect(set).toMatchObject({ title: 'T2', description: 'More', due_date: '2027-01-31', status: 'completed', version: 1 });
    const cleared = run(set, update({ description: null, due_date: null, status: 'open' }));
    expect(cleared).toMatchObject({ title: 'T2', description: null, due_date: null, status: 'open', version: 2 });
  });

  it('decides nothing when nothing changes', () => {
    expect(decide(created(), update({}))).toEqual([]);
    expect(decide(created(), update({ title: 'File the annual report', status: 'open', description: null, due_date: null }))).toEqual([]);
  });

  it('refuses bad values, null for required fields and fields that cannot be changed, listing each', () => {
    expect(
      validationFields(() => decide(created(), update({ title: null, status: 'done', due_date: '2024-1-1', description: ['x'], entity_id: ENTITY }))),
    ).toEqual(['title', 'description', 'due_date', 'status', 'entity_id']);
    expect(validationFields(() => decide(created(), update({ status: null })))).toEqual(['status']);
  });

  it('answers a missing task, or another account\'s, as not found, whatever version it asks for', () => {
    expect(() => decide(null, update({ status: 'completed' }))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ status: 'completed' }, 'acc-2'))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ status: 'completed' }, 'acc-2', 0))).toThrow(NotFoundError);
    expect(() => decide(created(), update({ status: 'completed' }, 'acc-2', 3))).toThrow(NotFoundError);
  });

  it('refuses an update for another version (If-Match), even a no-op', () => {
    expect(() => decide(created(), update({ status: 'completed' }, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(() => decide(created(), update({}, ACCOUNT, 1))).toThrow(PreconditionFailedError);
    expect(decide(created(), update({ status: 'completed' }, ACCOUNT, 0))).toHaveLength(1);
  });
});

describe('task field rules', () => {
  it.each([['', 'title must not be blank'], [7, 'title must be a string'], ['x'.repeat(201), 'title must be at most 200 characters']])(
    'title %j: %s',
    (title, problem) => expect(titleProblem(title)).toBe(problem),
  );
  it('description: any string up to 5000 characters', () => {
    expect(descriptionProblem('')).toBeNull();
    expect(descriptionProblem('d'.repeat(5001))).toBe('description must be at most 5000 characters');
    expect(descriptionProblem(false)).toBe('description must be a string or null');
  });
});

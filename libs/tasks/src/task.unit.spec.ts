import { ConflictError, PreconditionFailedError } from '@filing/platform';
import {
  DeciderSpecification,
  expectOwnershipBeforeIfMatch,
  resourceCommands,
  resourceEvents,
} from '@filing/platform/testing';
import { decide, descriptionProblem, evolve, initialTaskState, type TaskCommand, titleProblem } from './task';
import { TASK_CREATED, TASK_UPDATED, type TaskEvent, type TaskFields } from './task.events';

const ID = '0193a5b2-0000-7000-8000-0000000000f1';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';

const given = DeciderSpecification.for(
  { decide, evolve, initialState: initialTaskState },
  { streamId: `task-${ID}`, accountId: ACCOUNT },
);
const { create, update } = resourceCommands<TaskCommand>(ID, ACCOUNT);

const task: TaskFields = {
  entity_id: ENTITY,
  title: 'File the annual report',
  description: null,
  due_date: null,
  status: 'open',
};
const { created, updated } = resourceEvents<TaskEvent>(
  { created: TASK_CREATED, updated: TASK_UPDATED },
  { task_id: ID },
  task,
);

describe('task: create', () => {
  it('creates an open task with version 0 and null optional fields, its data carrying id, entity and status', () => {
    given([])
      .when(create({ entity_id: ENTITY, title: 'File the annual report' }))
      .then(created);
    given([])
      .when(create({ entity_id: ENTITY, title: 'File the annual report' }))
      .thenState({
        id: ID,
        account_id: ACCOUNT,
        ...task,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 0,
      });
  });

  it('keeps a description (empty too) and a due date', () => {
    given([])
      .when(create({ entity_id: ENTITY, title: 'T', description: 'Before March', due_date: '2028-02-29' }))
      .thenState((state) => expect(state).toMatchObject({ description: 'Before March', due_date: '2028-02-29' }));
    given([])
      .when(create({ entity_id: ENTITY, title: 'T', description: '' }))
      .thenState((state) => expect(state).toMatchObject({ description: '' }));
  });

  it('lists every broken rule at once', () => {
    given([]).when(create({})).thenInvalid(['entity_id', 'title']);
    given([])
      .when(create({ entity_id: 'e1', title: ' ', description: 5, due_date: '2023-02-29', status: 'completed' }))
      .thenInvalid(['entity_id', 'title', 'description', 'due_date', 'status']);
    given([])
      .when(create({ entity_id: ENTITY, title: 'x'.repeat(201), description: 'd'.repeat(5001) }))
      .thenInvalid(['title', 'description']);
    given([])
      .when(create({ entity_id: null, title: null, id: ID }))
      .thenInvalid(['entity_id', 'title', 'id']);
  });

  it('accepts a title of exactly 200 characters and a description of 5000', () => {
    given([])
      .when(create({ entity_id: ENTITY, title: 'x'.repeat(200), description: 'd'.repeat(5000) }))
      .then((events) => expect(events).toHaveLength(1));
  });

  it('refuses to create a task that exists', () => {
    given([created])
      .when(create({ entity_id: ENTITY, title: 'Again' }))
      .thenThrows(ConflictError);
  });
});

describe('task: update', () => {
  it('records the task after the update and the fields that changed', () => {
    given(created)
      .when(update({ status: 'completed', title: 'File the annual report', due_date: undefined }))
      .then(updated({ status: 'completed' }));
    given(created)
      .when(update({ status: 'completed' }))
      .thenState(
        (state) =>
          expect(state).toMatchObject({
            status: 'completed',
            created_at: '2026-01-01T00:00:00.000Z',
            updated_at: '2026-01-02T00:00:00.000Z',
            version: 1,
          }),
        '2026-01-02T00:00:00.000Z',
      );
  });

  it('sets and clears the optional fields, and reopens a completed task', () => {
    const set = { title: 'T2', description: 'More', due_date: '2027-01-31', status: 'completed' } as const;
    given(created)
      .when(update(set))
      .thenState((state) => expect(state).toMatchObject({ ...set, version: 1 }));
    given([created, updated(set)])
      .when(update({ description: null, due_date: null, status: 'open' }))
      .thenState((state) =>
        expect(state).toMatchObject({ title: 'T2', description: null, due_date: null, status: 'open', version: 2 }),
      );
  });

  it('decides nothing when nothing changes', () => {
    given(created).when(update({})).thenNothingHappened();
    given(created)
      .when(update({ title: 'File the annual report', status: 'open', description: null, due_date: null }))
      .thenNothingHappened();
  });

  it('refuses bad values, null for required fields and fields that cannot be changed, listing each', () => {
    given(created)
      .when(update({ title: null, status: 'done', due_date: '2024-1-1', description: ['x'], entity_id: ENTITY }))
      .thenInvalid(['title', 'description', 'due_date', 'status', 'entity_id']);
    given(created)
      .when(update({ status: null }))
      .thenInvalid(['status']);
  });

  it("answers a missing task, or another account's, as not found, whatever version it asks for", () => {
    expectOwnershipBeforeIfMatch(
      given,
      [created],
      (account, version) => update({ status: 'completed' }, account, version),
      { owner: ACCOUNT, version: 0 },
    );
  });

  it('refuses an update for another version (If-Match), even a no-op', () => {
    given(created)
      .when(update({}, ACCOUNT, 1))
      .thenThrows(PreconditionFailedError);
    given(created)
      .when(update({ status: 'completed' }, ACCOUNT, 0))
      .then(updated({ status: 'completed' }));
  });
});

describe('task field rules', () => {
  it.each([
    ['', 'title must not be blank'],
    [7, 'title must be a string'],
    ['x'.repeat(201), 'title must be at most 200 characters'],
  ])('title %j: %s', (title, problem) => expect(titleProblem(title)).toBe(problem));
  it('description: any string up to 5000 characters', () => {
    expect(descriptionProblem('')).toBeNull();
    expect(descriptionProblem('d'.repeat(5001))).toBe('description must be at most 5000 characters');
    expect(descriptionProblem(false)).toBe('description must be a string or null');
  });
});

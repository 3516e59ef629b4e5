import {
  assertCreatable,
  calendarDateRule,
  type CreateCommand,
  decidePatch,
  type FieldError,
  fieldProblems,
  missingFields,
  oneOfRule,
  orNull,
  type PatchCommand,
  type Resource,
  resourceEvolver,
  resourceIdRule,
  textRule,
  unknownFields,
} from '@filing/platform';
import { TASK_CREATED, TASK_FIELDS, TASK_STATUSES, TASK_UPDATED, type TaskEvent, type TaskFields } from './task.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const TITLE_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 5000;
export const CREATE_FIELDS = ['entity_id', 'title', 'description', 'due_date'] as const;
export const REQUIRED_FIELDS = ['entity_id', 'title'] as const;
export const WRITABLE_FIELDS = ['title', 'description', 'due_date', 'status'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

export const titleProblem = textRule('title', TITLE_MAX_LENGTH);

/** A description may be empty; null (not this rule) clears it. */
export function descriptionProblem(description: unknown): string | null {
  if (typeof description !== 'string') return 'description must be a string or null';
  if (description.length > DESCRIPTION_MAX_LENGTH)
    return `description must be at most ${DESCRIPTION_MAX_LENGTH} characters`;
  return null;
}

/** The task as its stream tells it; null until it is created. */
export type Task = Resource<TaskFields>;
export type TaskState = Task | null;
export const initialTaskState: TaskState = null;

export type CreateTaskInput = Readonly<{
  entity_id: string;
  title: string;
  description?: string | null;
  due_date?: string | null;
}>;
export type TaskChanges = { readonly [K in WritableField]?: K extends 'title' | 'status' ? string : string | null };
export type TaskCommand = CreateCommand<'create', CreateTaskInput> | PatchCommand<TaskChanges>;

export const evolve = resourceEvolver<TaskFields, TaskEvent>(TASK_CREATED, 'task_id', TASK_FIELDS);

export function decide(state: TaskState, command: TaskCommand): TaskEvent[] {
  if (command.kind === 'create') {
    const { input } = command;
    const { entity_id, title, description = null, due_date = null } = input;
    const fields = { entity_id, title, description, due_date, status: 'open' };
    const errors = [
      ...missingFields(input, REQUIRED_FIELDS),
      ...fieldErrors(fields),
      ...unknownFields(input, CREATE_FIELDS),
    ];
    assertCreatable(state, 'task', command.id, errors);
    return [{ type: TASK_CREATED, data: { task_id: command.id, ...(fields as TaskFields) } }];
  }
  const { next, changed } = decidePatch(state, command, 'task', {
    fields: TASK_FIELDS,
    writable: WRITABLE_FIELDS,
    fieldErrors,
  });
  // Nothing changes: nothing to record (the PATCH answers the task as it is).
  return changed.length === 0 ? [] : [{ type: TASK_UPDATED, data: { task_id: command.id, ...next, changed } }];
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: object): FieldError[] {
  return fieldProblems(fields, {
    entity_id: resourceIdRule('entity_id'),
    title: titleProblem,
    description: orNull(descriptionProblem),
    due_date: orNull(calendarDateRule('due_date')),
    status: oneOfRule('status', TASK_STATUSES),
  });
}

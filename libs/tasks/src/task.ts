import {
  assertOwnedAtVersion,
  ConflictError,
  definedOnly,
  type FieldError,
  isCalendarDate,
  isUuid,
  missingFields,
  type RecordedEnvelope,
  unknownFields,
  ValidationError,
} from '@filing/platform';
import { TASK_CREATED, TASK_STATUSES, TASK_UPDATED, type TaskEvent, type TaskFields, type TaskStatus } from './task.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
export const TITLE_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 5000;
export const CREATE_FIELDS = ['entity_id', 'title', 'description', 'due_date'] as const;
export const REQUIRED_FIELDS = ['entity_id', 'title'] as const;
export const WRITABLE_FIELDS = ['title', 'description', 'due_date', 'status'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

/** The task as its stream tells it; null until it is created. */
export type TaskState = Task | null;
export interface Task extends TaskFields {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of the last event. */
  readonly version: number;
}
export const initialTaskState: TaskState = null;

export interface CreateTaskInput {
  readonly entity_id: string;
  readonly title: string;
  readonly description?: string | null;
  readonly due_date?: string | null;
}
export type TaskChanges = { readonly [K in WritableField]?: K extends 'title' | 'status' ? string : string | null };

export type TaskCommand =
  | { readonly kind: 'create'; readonly task_id: string; readonly account_id: string; readonly input: CreateTaskInput }
  | {
      readonly kind: 'update';
      readonly task_id: string;
      readonly account_id: string;
      readonly changes: TaskChanges;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    };

export function evolve(state: TaskState, event: RecordedEnvelope<TaskEvent>): TaskState {
  const { metadata } = event;
  switch (event.type) {
    case TASK_CREATED:
      return {
        id: event.data.task_id,
        account_id: metadata.account_id ?? '',
        ...fieldsOf(event.data),
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
    case TASK_UPDATED:
      if (state === null) return state;
      return { ...state, ...fieldsOf(event.data), updated_at: metadata.occurred_at, version: Number(event.revision) };
  }
}

export function decide(state: TaskState, command: TaskCommand): TaskEvent[] {
  switch (command.kind) {
    case 'create': {
      if (state !== null) throw new ConflictError(`A task with id ${command.task_id} already exists`);
      const { input } = command;
      const fields = {
        entity_id: input.entity_id,
        title: input.title,
        description: input.description ?? null,
        due_date: input.due_date ?? null,
        status: 'open',
      };
      const errors = [...missingFields(input, REQUIRED_FIELDS), ...fieldErrors(fields), ...unknownFields(input, CREATE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      return [{ type: TASK_CREATED, data: { task_id: command.task_id, ...(fields as TaskFields) } }];
    }
    case 'update': {
      assertOwnedAtVersion(state, command, 'task', command.task_id);
      const changes = definedOnly(command.changes);
      const errors = [...fieldErrors(changes), ...unknownFields(changes, WRITABLE_FIELDS)];
      if (errors.length > 0) throw new ValidationError(errors);
      const next: TaskFields = { ...fieldsOf(state), ...(changes as Partial<TaskFields>) };
      const changed = WRITABLE_FIELDS.filter((field) => field in changes && next[field] !== state[field]);
      // Nothing changes: nothing to record (the PATCH answers the task as it is).
      if (changed.length === 0) return [];
      return [{ type: TASK_UPDATED, data: { task_id: state.id, ...next, changed } }];
    }
  }
}

/** Every rule broken by the fields present in `fields` (absent or undefined ones are not checked). */
export function fieldErrors(fields: { readonly [K in keyof TaskFields]?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  const check = (field: keyof TaskFields, problem: string | null) => {
    if (fields[field] !== undefined && problem) errors.push({ field, message: problem });
  };
  check('entity_id', isUuid(fields.entity_id) ? null : 'entity_id must be a UUID');
  check('title', titleProblem(fields.title));
  check('description', fields.description === null ? null : descriptionProblem(fields.description));
  check('due_date', fields.due_date === null || isCalendarDate(fields.due_date) ? null : 'due_date must be a date as YYYY-MM-DD');
  check('status', isTaskStatus(fields.status) ? null : `status must be one of ${TASK_STATUSES.join(', ')}`);
  return errors;
}

export function titleProblem(title: unknown): string | null {
  if (typeof title !== 'string') return 'title must be a string';
  if (title.trim() === '') return 'title must not be blank';
  if (title.length > TITLE_MAX_LENGTH) return `title must be at most ${TITLE_MAX_LENGTH} characters`;
  return null;
}

/** A description may be empty; null (not this rule) clears it. */
export function descriptionProblem(description: unknown): string | null {
  if (typeof description !== 'string') return 'description must be a string or null';
  if (description.length > DESCRIPTION_MAX_LENGTH) return `description must be at most ${DESCRIPTION_MAX_LENGTH} characters`;
  return null;
}

export function isTaskStatus(value: unknown): value is TaskStatus {
  return (TASK_STATUSES as readonly unknown[]).includes(value);
}

function fieldsOf(source: TaskFields): TaskFields {
  return {
    entity_id: source.entity_id,
    title: source.title,
    description: source.description,
    due_date: source.due_date,
    status: source.status,
  };
}

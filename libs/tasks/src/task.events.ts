import type { DomainEvent } from '@filing/platform';

/**
 * The tasks context's public contract: what other modules (webhooks) may depend on. Names are
 * explicit and stable; data is plain JSON and carries the task as it is after the event
 * (task_id, entity_id, status…), so a consumer needs no earlier event. A change of meaning is a
 * new schema version (the aggregate's `schemaVersions`; all are 1 so far).
 */
export const TASK_CREATED = 'tasks.TaskCreated';
export const TASK_UPDATED = 'tasks.TaskUpdated';

export const TASK_STATUSES = ['open', 'completed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** A to-do about one entity. A type, not an interface: it must be JSON. */
export type TaskFields = {
  /** The entity the task is about; never changes. */
  readonly entity_id: string;
  readonly title: string;
  readonly description: string | null;
  /** `YYYY-MM-DD`. */
  readonly due_date: string | null;
  readonly status: TaskStatus;
};

/** The fields every task event carries, as they are after the event. */
export const TASK_FIELDS: readonly (keyof TaskFields)[] = ['entity_id', 'title', 'description', 'due_date', 'status'];

export type TaskCreatedData = TaskFields & { readonly task_id: string };

/** The task after the update, and the names of the fields this update changed. */
export type TaskUpdatedData = TaskFields & {
  readonly task_id: string;
  readonly changed: ('title' | 'description' | 'due_date' | 'status')[];
};

export type TaskCreated = DomainEvent<typeof TASK_CREATED, TaskCreatedData>;
export type TaskUpdated = DomainEvent<typeof TASK_UPDATED, TaskUpdatedData>;
export type TaskEvent = TaskCreated | TaskUpdated;

/** Streams are `task-<id>`. */
export const TASK_STREAM_CONTEXT = 'task';

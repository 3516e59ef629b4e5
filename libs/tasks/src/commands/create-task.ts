import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, handleCommand, ReferenceChecker, streamName } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { type CreateTaskInput, decide, evolve, initialTaskState, type Task, type TaskCommand } from '../task';
import { TASK_EVENT_SCHEMA_VERSIONS, TASK_STREAM_CONTEXT, type TaskEvent } from '../task.events';

/** What a task write returns: the position read-your-writes waits for, and the task after it. */
export interface TaskWriteResult {
  /** null when nothing was appended (a no-op update). */
  readonly position: Position | null;
  readonly task: Task;
}

export class CreateTaskCommand extends Command<TaskWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly input: CreateTaskInput,
    /** UUID v7, so ids sort by creation (lists are ordered by id). */
    readonly taskId: string = uuidv7(),
  ) {
    super();
  }
}

@CommandHandler(CreateTaskCommand)
export class CreateTaskHandler implements ICommandHandler<CreateTaskCommand, TaskWriteResult> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
  ) {}

  async execute({ context, input, taskId }: CreateTaskCommand): Promise<TaskWriteResult> {
    const accountId = accountOf(context);
    // Ids are stored lower-case; a client may send a UUID in capitals.
    const entityId = typeof input.entity_id === 'string' ? input.entity_id.toLowerCase() : input.entity_id;
    // The entity must exist in the account (else a 400 naming entity_id), asked through its owner's lookup.
    await this.references.assertExist(accountId, { entity_id: entityId });
    return runTaskCommand(this.store, context, { kind: 'create', task_id: taskId, account_id: accountId, input: { ...input, entity_id: entityId } });
  }
}

/** Load → decide → append for any task command (the shared part of both handlers). */
export async function runTaskCommand(store: EventStore, context: CommandContext, command: TaskCommand): Promise<TaskWriteResult> {
  const result = await handleCommand<ReturnType<typeof evolve>, TaskEvent, TaskCommand>({
    store,
    streamId: streamName(TASK_STREAM_CONTEXT, command.task_id),
    initialState: initialTaskState,
    evolve,
    decide,
    command,
    context,
    schemaVersion: (type) => TASK_EVENT_SCHEMA_VERSIONS[type as TaskEvent['type']] ?? 1,
  });
  // decide() either appended or threw for a missing task, so the state exists here.
  return { position: result.position, task: result.state! };
}

/** Tasks always belong to an account; a context without one is a wiring bug, not bad input. */
export function accountOf(context: CommandContext): string {
  if (!context.account_id) throw new Error('Task commands need an account');
  return context.account_id;
}

import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { TaskChanges } from '../task';
import { accountOf, runTaskCommand, type TaskWriteResult } from './create-task';

export class UpdateTaskCommand extends Command<TaskWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly taskId: string,
    readonly changes: TaskChanges,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(UpdateTaskCommand)
export class UpdateTaskHandler implements ICommandHandler<UpdateTaskCommand, TaskWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, taskId, changes, ifMatch }: UpdateTaskCommand): Promise<TaskWriteResult> {
    return runTaskCommand(this.store, context, {
      kind: 'update',
      task_id: taskId,
      account_id: accountOf(context),
      changes,
      // Checked by decide() after ownership, not by handleCommand's ifMatch (see task.ts).
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}

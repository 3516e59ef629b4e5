import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { EntityChanges } from '../entity';
import { accountOf, type EntityWriteResult, runEntityCommand } from './create-entity';

export class UpdateEntityCommand extends Command<EntityWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly entityId: string,
    readonly changes: EntityChanges,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(UpdateEntityCommand)
export class UpdateEntityHandler implements ICommandHandler<UpdateEntityCommand, EntityWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, entityId, changes, ifMatch }: UpdateEntityCommand): Promise<EntityWriteResult> {
    return runEntityCommand(this.store, context, {
      kind: 'update',
      entity_id: entityId,
      account_id: accountOf(context),
      changes,
      // Checked by decide() after ownership, not by handleCommand's ifMatch (see entity.ts).
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}

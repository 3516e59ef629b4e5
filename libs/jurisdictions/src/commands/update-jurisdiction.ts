import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { JurisdictionChanges } from '../jurisdiction';
import { accountOf, type JurisdictionWriteResult, runJurisdictionCommand } from './add-jurisdiction';

export class UpdateJurisdictionCommand extends Command<JurisdictionWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly jurisdictionId: string,
    readonly changes: JurisdictionChanges,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(UpdateJurisdictionCommand)
export class UpdateJurisdictionHandler implements ICommandHandler<UpdateJurisdictionCommand, JurisdictionWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, jurisdictionId, changes, ifMatch }: UpdateJurisdictionCommand): Promise<JurisdictionWriteResult> {
    return runJurisdictionCommand(this.store, context, {
      kind: 'update',
      jurisdiction_id: jurisdictionId,
      account_id: accountOf(context),
      changes,
      // Checked by decide() after ownership, not by handleCommand's ifMatch (see jurisdiction.ts).
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}

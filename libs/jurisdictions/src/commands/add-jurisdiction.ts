import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  type CommandContext,
  ConflictError,
  newResourceId,
  ReferenceChecker,
  requireAccount,
  type WriteResult,
} from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AddJurisdictionInput, Jurisdiction } from '../jurisdiction';
import { JurisdictionAggregate } from '../jurisdiction.aggregate';
import { JurisdictionsQueries } from '../read-model/jurisdictions.queries';

export class AddJurisdictionCommand extends Command<WriteResult<Jurisdiction>> {
  constructor(
    readonly context: CommandContext,
    readonly input: AddJurisdictionInput,
  ) {
    super();
  }
}

/**
 * One registration per entity and jurisdiction (CONTRACT §2: a duplicate is a 409); the existing
 * one is changed with PATCH. Checked on the read model, which read-your-writes keeps current for
 * the client's own earlier writes; two simultaneous first adds can both pass.
 */
@CommandHandler(AddJurisdictionCommand)
export class AddJurisdictionHandler implements ICommandHandler<AddJurisdictionCommand, WriteResult<Jurisdiction>> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
    private readonly jurisdictions: JurisdictionsQueries,
  ) {}

  async execute({ context, input }: AddJurisdictionCommand): Promise<WriteResult<Jurisdiction>> {
    const accountId = requireAccount(context);
    const checked = await this.references.normalized(accountId, input, ['entity_id']);
    const existing =
      typeof checked.code === 'string'
        ? this.jurisdictions.findByEntityAndCode(accountId, checked.entity_id, checked.code)
        : null;
    if (existing) {
      throw new ConflictError(
        `Entity ${checked.entity_id} is already registered in ${existing.code} (jurisdiction ${existing.id}); change that one with PATCH`,
      );
    }
    return JurisdictionAggregate.run(
      this.store,
      context,
      { kind: 'add', id: newResourceId(), account_id: accountId, input: checked },
      { newStream: true },
    );
  }
}

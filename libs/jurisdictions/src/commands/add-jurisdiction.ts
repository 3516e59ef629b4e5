import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, ConflictError, handleCommand, ReferenceChecker, streamName } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import {
  type AddJurisdictionInput,
  decide,
  evolve,
  initialJurisdictionState,
  type Jurisdiction,
  type JurisdictionCommand,
} from '../jurisdiction';
import { JURISDICTION_EVENT_SCHEMA_VERSIONS, JURISDICTION_STREAM_CONTEXT, type JurisdictionEvent } from '../jurisdiction.events';
import { JurisdictionsQueries } from '../read-model/jurisdictions.queries';

/** What a jurisdiction write returns: the position read-your-writes waits for, and the registration after it. */
export interface JurisdictionWriteResult {
  /** null when nothing was appended (a no-op update). */
  readonly position: Position | null;
  readonly jurisdiction: Jurisdiction;
}

export class AddJurisdictionCommand extends Command<JurisdictionWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly input: AddJurisdictionInput,
    /** UUID v7, so ids sort by creation (lists are ordered by id). */
    readonly jurisdictionId: string = uuidv7(),
  ) {
    super();
  }
}

@CommandHandler(AddJurisdictionCommand)
export class AddJurisdictionHandler implements ICommandHandler<AddJurisdictionCommand, JurisdictionWriteResult> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
    private readonly jurisdictions: JurisdictionsQueries,
  ) {}

  async execute({ context, input, jurisdictionId }: AddJurisdictionCommand): Promise<JurisdictionWriteResult> {
    const accountId = accountOf(context);
    // Ids are stored lower-case; a client may send a UUID in capitals.
    const entityId = typeof input.entity_id === 'string' ? input.entity_id.toLowerCase() : input.entity_id;
    // The entity must exist in the account (else a 400 naming entity_id), asked through its owner's lookup.
    await this.references.assertExist(accountId, { entity_id: entityId });
    // One registration per entity and jurisdiction (CONTRACT §2: a duplicate is a 409); the
    // existing one is changed with PATCH. Checked on the read model, which read-your-writes keeps
    // current for the client's own earlier writes; two simultaneous first adds can both pass.
    const existing = typeof input.code === 'string' ? this.jurisdictions.findByEntityAndCode(accountId, entityId, input.code) : null;
    if (existing) {
      throw new ConflictError(`Entity ${entityId} is already registered in ${existing.code} (jurisdiction ${existing.id}); change that one with PATCH`);
    }
    return runJurisdictionCommand(this.store, context, {
      kind: 'add',
      jurisdiction_id: jurisdictionId,
      account_id: accountId,
      input: { ...input, entity_id: entityId },
    });
  }
}

/** Load → decide → append for any jurisdiction command (the shared part of both handlers). */
export async function runJurisdictionCommand(
  store: EventStore,
  context: CommandContext,
  command: JurisdictionCommand,
): Promise<JurisdictionWriteResult> {
  const result = await handleCommand<ReturnType<typeof evolve>, JurisdictionEvent, JurisdictionCommand>({
    store,
    streamId: streamName(JURISDICTION_STREAM_CONTEXT, command.jurisdiction_id),
    initialState: initialJurisdictionState,
    evolve,
    decide,
    command,
    context,
    schemaVersion: (type) => JURISDICTION_EVENT_SCHEMA_VERSIONS[type as JurisdictionEvent['type']] ?? 1,
  });
  // decide() either appended or threw for a missing registration, so the state exists here.
  return { position: result.position, jurisdiction: result.state! };
}

/** Jurisdictions always belong to an account; a context without one is a wiring bug, not bad input. */
export function accountOf(context: CommandContext): string {
  if (!context.account_id) throw new Error('Jurisdiction commands need an account');
  return context.account_id;
}

import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, handleCommand, streamName } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { type CreateEntityInput, decide, type Entity, type EntityCommand, evolve, initialEntityState } from '../entity';
import { ENTITY_EVENT_SCHEMA_VERSIONS, ENTITY_STREAM_CONTEXT, type EntityEvent } from '../entity.events';

/** What an entity write returns: the position read-your-writes waits for, and the entity after it. */
export interface EntityWriteResult {
  /** null when nothing was appended (a no-op update). */
  readonly position: Position | null;
  readonly entity: Entity;
}

export class CreateEntityCommand extends Command<EntityWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly input: CreateEntityInput,
    /** UUID v7, so ids sort by creation (lists are ordered by id). */
    readonly entityId: string = uuidv7(),
  ) {
    super();
  }
}

@CommandHandler(CreateEntityCommand)
export class CreateEntityHandler implements ICommandHandler<CreateEntityCommand, EntityWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, input, entityId }: CreateEntityCommand): Promise<EntityWriteResult> {
    return runEntityCommand(this.store, context, { kind: 'create', entity_id: entityId, account_id: accountOf(context), input });
  }
}

/** Load → decide → append for any entity command (the shared part of both handlers). */
export async function runEntityCommand(
  store: EventStore,
  context: CommandContext,
  command: EntityCommand,
): Promise<EntityWriteResult> {
  const result = await handleCommand<ReturnType<typeof evolve>, EntityEvent, EntityCommand>({
    store,
    streamId: streamName(ENTITY_STREAM_CONTEXT, command.entity_id),
    initialState: initialEntityState,
    evolve,
    decide,
    command,
    context,
    schemaVersion: (type) => ENTITY_EVENT_SCHEMA_VERSIONS[type as EntityEvent['type']] ?? 1,
  });
  // decide() either appended or threw for a missing entity, so the state exists here.
  return { position: result.position, entity: result.state! };
}

/** Entities always belong to an account; a context without one is a wiring bug, not bad input. */
export function accountOf(context: CommandContext): string {
  if (!context.account_id) throw new Error('Entity commands need an account');
  return context.account_id;
}

import { extend } from '../domain/extend';
import { EVENT_STORE, type EventStore, type Position, type StreamRevision } from '@filing/event-store';
import { Inject, type Type } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { type CommandContext, type DomainEvent, type RecordedEnvelope, streamName } from '../events/envelope';
import { ReferenceChecker } from '../http/references';
import { handleCommand, loadAggregate } from './handle-command';

/** What a write of a resource answers: the position read-your-writes waits for, and the resource after it. */
export interface WriteResult<T> {
  /** null when nothing was appended (a no-op update). */
  readonly position: Position | null;
  readonly resource: T;
}

/** A command that writes one resource for `context` (its account, its actor). */
export interface WriteCommand<T> extends Command<WriteResult<T>> {
  readonly context: CommandContext;
}

/** The account a customer's command acts in. A context without one is a wiring bug, not bad input. */
export function requireAccount(context: CommandContext): string {
  if (!context.account_id) throw new Error('This command acts on an account, and its context names none');
  return context.account_id;
}

/** A new resource's id: UUID v7, so ids sort by creation and lists ordered by id are oldest first. */
export function newResourceId(): string {
  return uuidv7();
}

/** `@IfMatch()` as `decide` checks it (after ownership, so it never tells another account the id exists). */
export function expectedVersion(ifMatch: StreamRevision | undefined): number | undefined {
  return ifMatch === undefined ? undefined : Number(ifMatch);
}

/** A family's domain command: what it does, to which resource, and for which account. */
export interface DomainCommand {
  readonly kind: string;
  readonly id: string;
  readonly account_id: string | null;
}

/** A domain command as a route sends it: the account comes from the request's context. */
export type WithoutAccount<C> = C extends unknown ? Omit<C, 'account_id'> : never;

/** A creation as a route sends it: the aggregate mints the new resource's id too. */
export type Creation<C> = C extends unknown ? Omit<C, 'account_id' | 'id'> : never;

/** How a command runs: `newStream` when its id was minted for it (see `HandleCommandOptions`). */
export interface RunOptions {
  readonly newStream?: boolean;
}

/** What a family declares: its streams and its pure domain (as Emmett's `CommandHandler({ evolve, initialState })`). */
export interface AggregateDeclaration<S, E extends DomainEvent, C extends DomainCommand> {
  /** Streams are `<streamPrefix>-<id>` (`task-0193…`); also the resource's name in a 404. */
  readonly streamPrefix: string;
  readonly initialState: S;
  readonly evolve: (state: S, event: RecordedEnvelope<E>) => S;
  /** Pure: the events a command causes, or a domain error. */
  readonly decide: (state: S, command: C) => readonly E[];
  /** schema_version of each event type (default 1). */
  readonly schemaVersions?: Readonly<Partial<Record<E['type'], number>>>;
  /**
   * Fields of a command's `input` that name other families' resources (`entity_id`): before
   * deciding, each is lower-cased and must exist in the account (else a 400 naming it).
   */
  readonly references?: readonly string[];
}

/** The typed command runner of one family, and the Nest command and handler that route writes through the CommandBus. */
export interface Aggregate<S, E extends DomainEvent, C extends DomainCommand> extends AggregateDeclaration<S, E, C> {
  streamId(id: string): string;
  /** The resource as its stream tells it now, and the stream's revision (null: no stream). */
  load(store: EventStore, id: string): Promise<{ state: S; revision: StreamRevision | null }>;
  /**
   * Load → decide → append with the expected revision (retried on a concurrent write). The
   * resource after it: decide() either wrote or threw for a missing one, so it exists.
   */
  run(
    store: EventStore,
    context: CommandContext,
    command: C,
    options?: RunOptions,
  ): Promise<WriteResult<NonNullable<S>>>;
  /** The CQRS command for `command`, run in the context's account with the references checked. */
  command(context: CommandContext, command: WithoutAccount<C>): WriteCommand<NonNullable<S>>;
  /**
   * `command` for a new resource, under an id minted here (`newResourceId`): no stream can exist
   * under it, so the command decides without reading one.
   */
  create(context: CommandContext, command: Creation<C>): WriteCommand<NonNullable<S>>;
  /** The provider that executes `command(…)`: list it in the family's module. */
  readonly Handler: Type<ICommandHandler>;
}

/**
 * Declares a family's aggregate once; every write of the family then goes through the same
 * plumbing (load → decide → append → one WriteResult) instead of a copy per family.
 */
export function defineAggregate<S, E extends DomainEvent, C extends DomainCommand>(
  declaration: AggregateDeclaration<S, E, C>,
): Aggregate<S, E, C> {
  const { streamPrefix, initialState, evolve } = declaration;
  const streamId = (id: string) => streamName(streamPrefix, id);
  const run = commandRunner(declaration, streamId);
  const { AggregateCommand, Handler } = commandBusFor(declaration, run);
  return {
    streamId,
    load: (store, id) => loadAggregate(store, streamId(id), initialState, evolve),
    run,
    command: (context, command) => new AggregateCommand(context, command),
    create: (context, command) =>
      new AggregateCommand(context, extend(command, { id: newResourceId() }) as WithoutAccount<C>, { newStream: true }),
    Handler,
    ...declaration,
  };
}

/** Load → decide → append of one command, as `Aggregate.run`. */
function commandRunner<S, E extends DomainEvent, C extends DomainCommand>(
  declaration: AggregateDeclaration<S, E, C>,
  streamId: (id: string) => string,
): Aggregate<S, E, C>['run'] {
  const { initialState, evolve, decide, schemaVersions = {} } = declaration;
  return async (store, context, command, options = {}) => {
    // The options last, not first: see extend.
    const result = await handleCommand<S, E, C>({
      store,
      streamId: streamId(command.id),
      initialState,
      evolve,
      decide,
      command,
      context,
      schemaVersion: (type) => (schemaVersions as Record<string, number | undefined>)[type] ?? 1,
      ...options,
    });
    return { position: result.position, resource: result.state as NonNullable<S> };
  };
}

/** The family's CQRS command class and its handler, which checks references and runs it in the context's account. */
function commandBusFor<S, E extends DomainEvent, C extends DomainCommand>(
  { streamPrefix, references = [] }: AggregateDeclaration<S, E, C>,
  run: Aggregate<S, E, C>['run'],
) {
  class AggregateCommand extends Command<WriteResult<NonNullable<S>>> implements WriteCommand<NonNullable<S>> {
    constructor(
      readonly context: CommandContext,
      readonly command: WithoutAccount<C>,
      readonly options: RunOptions = {},
    ) {
      super();
    }
  }

  @CommandHandler(AggregateCommand)
  class AggregateCommandHandler implements ICommandHandler<AggregateCommand, WriteResult<NonNullable<S>>> {
    constructor(
      @Inject(EVENT_STORE) private readonly store: EventStore,
      private readonly referenceChecker: ReferenceChecker,
    ) {}

    async execute({ context, command, options }: AggregateCommand): Promise<WriteResult<NonNullable<S>>> {
      const account_id = requireAccount(context);
      const { input } = command as { input?: object };
      const checked =
        input && references.length > 0
          ? { input: await this.referenceChecker.normalized(account_id, input, references) }
          : {};
      return run(this.store, context, extend(command, { account_id }, checked) as unknown as C, options);
    }
  }
  // Named after the family in Nest's logs and DI errors (every family's class is this one class expression).
  Object.defineProperty(AggregateCommandHandler, 'name', { value: `${streamPrefix}CommandHandler` });
  return { AggregateCommand, Handler: AggregateCommandHandler };
}

import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  type CommandContext,
  CursorCodec,
  handleCommand,
  NotFoundError,
  ReadYourWrites,
  SecretBox,
  streamName,
  type Page,
  pageRequest,
  toPage,
  extend,
} from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { Position, StreamRevision } from '@filing/event-store';
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Resolver } from '../address/address-guard';
import { EndpointsQueries } from '../read-model/endpoints.queries';
import { SecretKeys } from '../secrets/secret-keys';
import { validateEndpointInput } from './endpoint-input';
import { KeyedSerial } from './keyed-serial';
import { generateSecret, secretFingerprint } from '../signing/signature';
import { decideEndpoint, evolveEndpoint, initialEndpoint, type EndpointCommand } from './endpoint';
import {
  type DisabledReason,
  ENDPOINT_EVENT_SCHEMA_VERSIONS,
  ENDPOINT_STREAM,
  type EndpointEvent,
  secretContext,
} from './endpoint.events';
import {
  endpointDetails,
  type EndpointDetails,
  endpointView,
  type EndpointRow,
  type EndpointView,
} from './endpoint-views';

export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');
const SYSTEM_ACTOR = 'system:webhooks';

export interface CreateEndpointInput {
  readonly url: string;
  readonly description?: string | null;
  readonly event_types?: string[];
  /** 1–1,000 (the DTO checks it); null or absent: no limit. */
  readonly rate_limit_per_second?: number | null;
}
export type UpdateEndpointInput = Partial<CreateEndpointInput>;

/** Endpoint commands and queries; the controller only maps HTTP onto these. */
@Injectable()
export class EndpointsService {
  /**
   * An account's creates on this instance, one at a time: each counts the endpoints with the
   * one before it already in the read model (the cap holds against concurrent creates here).
   */
  private readonly creates = new KeyedSerial();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_RESOLVER) private readonly resolver: Resolver,
    private readonly box: SecretBox,
    private readonly queries: EndpointsQueries,
    private readonly ryw: ReadYourWrites,
    private readonly cursors: CursorCodec,
    private readonly secretKeys: SecretKeys,
  ) {}

  async create(ctx: CommandContext, input: CreateEndpointInput): Promise<EndpointView & { secret: string }> {
    const accountId = accountOf(ctx);
    const eventTypes = input.event_types ?? [];
    await validateEndpointInput(input.url, eventTypes, this.resolver, this.config.webhookAllowPrivateNetworks);
    const id = uuidv7();
    const secret = generateSecret();
    await this.creates.run(accountId, async () => {
      // The count is the read model's once it holds all the store held now (any instance's creates).
      await this.ryw.awaitHead();
      await this.run(ctx, undefined, {
        kind: 'create',
        accountId,
        endpointId: id,
        url: input.url,
        description: input.description ?? null,
        eventTypes: dedupe(eventTypes),
        rateLimitPerSecond: input.rate_limit_per_second ?? null,
        secretFingerprint: secretFingerprint(secret),
        accountEndpoints: this.queries.countOf(accountId),
        maxEndpoints: this.config.webhookMaxEndpointsPerAccount,
      });
    });
    await this.storeSecret(accountId, id, secret);
    return extend(this.get(ctx, id), { secret });
  }

  async update(
    ctx: CommandContext,
    id: string,
    input: UpdateEndpointInput,
    ifMatch?: StreamRevision,
  ): Promise<EndpointView> {
    const accountId = accountOf(ctx);
    this.get(ctx, id);
    if (input.url !== undefined || input.event_types !== undefined)
      await validateEndpointInput(
        input.url,
        input.event_types ?? [],
        this.resolver,
        this.config.webhookAllowPrivateNetworks,
      );
    await this.run(ctx, ifMatch, {
      kind: 'update',
      accountId,
      endpointId: id,
      url: input.url,
      description: input.description,
      eventTypes: input.event_types ? dedupe(input.event_types) : undefined,
      rateLimitPerSecond: input.rate_limit_per_second,
    });
    return this.get(ctx, id);
  }

  async action(
    ctx: CommandContext,
    id: string,
    kind: 'enable' | 'disable' | 'delete',
    ifMatch?: StreamRevision,
  ): Promise<EndpointView | null> {
    // Ownership before If-Match (run() checks it before decide): another account's id is a 404, never a 412.
    this.row(ctx, id);
    const target = { accountId: accountOf(ctx), endpointId: id };
    await this.run(ctx, ifMatch, kind === 'disable' ? { kind, ...target, reason: 'manual' } : { kind, ...target });
    if (kind !== 'delete') return this.get(ctx, id);
    // Recorded: its secrets go with it (a failure here leaves them to `filing secrets:reseal`).
    await this.secretKeys.destroy(id);
    return null;
  }

  /**
   * Disabled by the service, not a user: the dispatcher's answer to a 410 Gone, or the
   * auto-disable of an endpoint failing for too long (with the attempts it was judged on).
   * Records nothing when the endpoint is already disabled (its first reason stands), was enabled
   * again after the failing began, or no longer exists.
   */
  async disableBySystem(
    accountId: string,
    endpointId: string,
    reason: Exclude<DisabledReason, 'manual'>,
    failing?: { since: string; lastFailureAt: string },
  ): Promise<Position | null> {
    const context = { account_id: accountId, actor: SYSTEM_ACTOR, correlation_id: randomUUID(), causation_id: null };
    try {
      // Every in-flight attempt may hear the 410 (every instance judge it failing): decide again on a concurrent write.
      return (await this.append(context, undefined, { kind: 'disable', accountId, endpointId, reason, failing }, 10))
        .position;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  /** Records a failing streak (WEBHOOK_FAILING_AFTER) once; null when nothing was written (reported, disabled, gone). */
  async reportFailing(
    accountId: string,
    endpointId: string,
    failing: { since: string; lastFailureAt: string },
  ): Promise<Position | null> {
    const context = { account_id: accountId, actor: SYSTEM_ACTOR, correlation_id: randomUUID(), causation_id: null };
    try {
      return (await this.append(context, undefined, { kind: 'report-failing', accountId, endpointId, failing }, 10))
        .position;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  /** A new secret; the old one keeps signing for 24 h beside it. */
  async rotateSecret(
    ctx: CommandContext,
    id: string,
    ifMatch?: StreamRevision,
  ): Promise<EndpointView & { secret: string }> {
    this.row(ctx, id);
    const secret = generateSecret();
    await this.run(ctx, ifMatch, {
      kind: 'rotate-secret',
      accountId: accountOf(ctx),
      endpointId: id,
      secretFingerprint: secretFingerprint(secret),
      now: new Date(),
    });
    await this.storeSecret(accountOf(ctx), id, secret);
    return extend(this.get(ctx, id), { secret });
  }

  /** Opened from the read model's sealed copy: every instance with the SECRETS_KEY can. */
  secret(ctx: CommandContext, id: string): { secret: string } {
    const row = this.row(ctx, id);
    if (row.secret_sealed === null) {
      throw new NotFoundError(
        `The signing secret of webhook endpoint ${id} was kept by an older version and never imported: rotate it to make a new one`,
      );
    }
    return { secret: this.box.open(row.secret_sealed, secretContext(id)) };
  }

  /**
   * The new secret, sealed, into the endpoint's key stream, after the event that names its
   * fingerprint (the read model fills it in from there); answered once the read model has it.
   * A crash between the two leaves an endpoint without its secret: a rotation makes a new one.
   */
  private async storeSecret(accountId: string, endpointId: string, secret: string): Promise<void> {
    await this.ryw.await(await this.secretKeys.seal(accountId, endpointId, secretFingerprint(secret), secret));
  }

  get(ctx: CommandContext, id: string): EndpointView {
    return endpointView(this.row(ctx, id));
  }

  /** The settings screen's view: the API's, and since when it is disabled. */
  details(ctx: CommandContext, id: string): EndpointDetails {
    return endpointDetails(this.row(ctx, id));
  }

  list(ctx: CommandContext, query: { limit?: string; cursor?: string }): Page<EndpointView> {
    return this.page(ctx, query, endpointView);
  }

  listDetails(ctx: CommandContext, query: { limit?: string; cursor?: string }): Page<EndpointDetails> {
    return this.page(ctx, query, endpointDetails);
  }

  private page<T>(
    ctx: CommandContext,
    query: { limit?: string; cursor?: string },
    view: (row: EndpointRow) => T,
  ): Page<T> {
    const request = pageRequest<number>(query, 'webhook-endpoints', 'number', this.cursors);
    const rows = this.queries.page(accountOf(ctx), request.after ?? 0, request.limit + 1);
    const page = toPage(rows, request, 'webhook-endpoints', (r) => r.rowid_seq ?? 0);
    return { data: page.data.map(view), next_cursor: page.next_cursor };
  }

  private row(ctx: CommandContext, id: string): EndpointRow {
    const row = this.queries.endpoint(accountOf(ctx), id);
    if (!row) throw NotFoundError.of('webhook endpoint', id);
    return row;
  }

  private async run(ctx: CommandContext, ifMatch: StreamRevision | undefined, command: EndpointCommand): Promise<void> {
    const result = await this.append(ctx, ifMatch, command);
    await this.ryw.await(result.position);
  }

  private append(
    ctx: CommandContext,
    ifMatch: StreamRevision | undefined,
    command: EndpointCommand,
    maxRetries?: number,
  ) {
    return handleCommand<typeof initialEndpoint, EndpointEvent, EndpointCommand>({
      store: this.store,
      streamId: streamName(ENDPOINT_STREAM, command.endpointId),
      initialState: initialEndpoint,
      evolve: evolveEndpoint,
      decide: decideEndpoint,
      command,
      context: ctx,
      ifMatch,
      maxRetries,
      schemaVersion: (type) => ENDPOINT_EVENT_SCHEMA_VERSIONS[type as EndpointEvent['type']] ?? 1,
    });
  }
}

function accountOf(ctx: CommandContext): string {
  if (!ctx.account_id) throw new NotFoundError('Webhook endpoints belong to an account');
  return ctx.account_id;
}

function dedupe(list: readonly string[]): string[] {
  return [...new Set(list)];
}

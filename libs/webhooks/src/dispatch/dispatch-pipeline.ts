import type { Position, StreamRevision } from '@filing/event-store';
import { serializeNotification } from '../notifications/notification-mapper';
import { APP_CONFIG, type AppConfig, Metrics, SecretBox } from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { decideDispatch, type DeliveryState, type DeliveryTarget } from '../deliveries/delivery';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { classifyAttempt, endpointDisabledBy, endpointPausedFor, errorMessage } from '../deliveries/outcome';
import { EndpointsService } from '../endpoints/endpoints.service';
import { DeliveryTargets } from '../read-model/delivery-target.queries';
import { DeliveryStates } from './delivery-states';
import { OpenedSecrets } from './opened-secrets';
import { claimLeaseMs, claimSendBy, DispatcherInstance } from './dispatcher-instance';
import { WEBHOOK_SENDER } from './sender-thread';
import type { Sender, SendResult, WebhookRequest } from './webhook-sender';

interface LoadedDelivery {
  readonly state: DeliveryState;
  readonly revision: StreamRevision | null;
}

interface AttemptContext {
  readonly deliveryId: string;
  readonly delivery: LoadedDelivery;
  readonly target: DeliveryTarget;
  readonly attemptedAt: Date;
}

/** What `prepare` found: a request to send, an attempt that cannot be signed here, or nothing to send. */
export type PreparedDispatch =
  | (AttemptContext & { readonly kind: 'send'; readonly request: WebhookRequest })
  | (AttemptContext & { readonly kind: 'unsigned' })
  /** Skipped or cancelled: `position` is what the read model must reach before the delivery is looked at again. */
  | { readonly kind: 'settled'; readonly position: Position | null };

type Attempt = Exclude<PreparedDispatch, { kind: 'settled' }>;

/** How the dispatcher paces an endpoint (EndpointPacer) around one attempt. */
export interface AttemptHooks {
  /** Asked just before the claim: false leaves the delivery as it is, due and unclaimed (its endpoint is paused). */
  readonly mayStart?: () => boolean;
  /** The request goes out now. */
  readonly sending?: () => void;
  /** The receiver asked the whole endpoint to wait this long (a 429 with Retry-After). */
  readonly pause?: (ms: number) => void;
  /** The request is over (answered, failed or not sent): only the recording of the attempt is left. */
  readonly answered?: () => void;
  /**
   * The request never left after all: it waited in its endpoint's lane on the sender thread and
   * was dropped (SendLanes). Nothing is recorded; the delivery stays due (on a shared store, once
   * this instance's claim lapses).
   */
  readonly notSent?: () => void;
}

/**
 * One attempt of one delivery as typed stages, after svix's worker (prepare_dispatch →
 * make_http_call → handle_successful / handle_failed_dispatch):
 * - `prepare`: the delivery's state (DeliveryStates' copy, else its stream) and its
 *   `DeliveryTarget` (one read-model query), the
 *   send/cancel rule (`decideDispatch`), the claim (a `DeliveryClaimed` appended expecting the
 *   revision just read: of several instances reaching for one attempt, one wins and the others
 *   skip it; on a store one process owns, only a check of that revision: DeliveryCommands.claim),
 *   then the request to sign;
 * - `send`: the signed POST (signed and sent on the sender thread, SenderThread), nothing else;
 * - `record`: the attempt and its outcome as events on the delivery's stream, expecting the
 *   claim's revision; a 410 Gone also
 *   disables the endpoint (reason `gone`), whose pending deliveries the fan-out then cancels.
 * Returns the position the read model must reach before the delivery is picked again.
 */
@Injectable()
export class DispatchPipeline {
  private readonly logger = new Logger('WebhookDispatcher');
  private readonly attempts?: Counter<'outcome'>;
  private readonly attemptSeconds?: Histogram;
  private readonly claimConflicts?: Counter;
  private readonly leaseLapsed?: Counter;
  private readonly leaseMs: number;
  /** Opened signing secrets (one AES-GCM open per secret, not per attempt); in memory only, never logged. */
  private readonly secrets: OpenedSecrets;
  /** Endpoints being disabled: the 410s of concurrent attempts append one disable. */
  private readonly disabling = new Map<string, Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_SENDER) private readonly sender: Sender,
    private readonly deliveries: DeliveryCommands,
    private readonly targets: DeliveryTargets,
    box: SecretBox,
    private readonly endpoints: EndpointsService,
    private readonly instance: DispatcherInstance,
    private readonly states: DeliveryStates,
    @Optional() metrics?: Metrics,
  ) {
    this.leaseMs = claimLeaseMs(config.webhookTimeoutMs);
    this.secrets = new OpenedSecrets(box, (endpointId, err) =>
      this.logger.error(`Webhook endpoint ${endpointId}: ${err.message}`),
    );
    if (metrics) {
      this.attempts = new Counter({
        name: 'webhook_delivery_attempts_total',
        help: 'Webhook delivery attempts by outcome: delivered, retry, failed, or the error kind of a failed connection',
        labelNames: ['outcome'] as const,
        registers: [metrics.registry],
      });
      this.attemptSeconds = new Histogram({
        name: 'webhook_delivery_attempt_duration_seconds',
        help: 'Duration of webhook delivery attempts (request sent to response or error)',
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [metrics.registry],
      });
      this.claimConflicts = new Counter({
        name: 'webhook_delivery_claim_conflicts_total',
        help: 'Attempts this instance reached for but another instance (or a concurrent write) claimed first',
        registers: [metrics.registry],
      });
      this.leaseLapsed = new Counter({
        name: 'webhook_delivery_claims_lapsed_total',
        help: 'Claimed attempts given up unsent because the claim had too little lease left when the request was to leave',
        registers: [metrics.registry],
      });
    }
  }

  async run(deliveryId: string, hooks: AttemptHooks = {}): Promise<Position | null> {
    const prepared = await this.prepare(deliveryId, hooks);
    if (prepared.kind === 'settled') return prepared.position;
    if (prepared.kind === 'send') hooks.sending?.();
    const sent = prepared.kind === 'send' ? await this.send(prepared.request) : this.unsent(prepared);
    if (sent === null) {
      hooks.notSent?.();
      hooks.answered?.();
      return null;
    }
    const pauseMs = endpointPausedFor(sent.result, sent.retryAfterMs);
    if (pauseMs !== null) hooks.pause?.(pauseMs);
    // A 410 keeps its slot until the endpoint's disable is written: no more requests meanwhile.
    if (endpointDisabledBy(sent.result) === null) hooks.answered?.();
    return this.record(prepared, sent);
  }

  /**
   * From the state DeliveryStates holds when it has one (no stream read); when that copy leads to
   * anything but a claimed attempt (it may have missed a write), from the stream, as if it had none.
   */
  async prepare(deliveryId: string, hooks: AttemptHooks = {}): Promise<PreparedDispatch> {
    const known = this.states.get(deliveryId);
    if (known !== undefined) {
      const prepared = await this.prepareOn(deliveryId, known, hooks, true);
      if (prepared !== null) return prepared;
      this.states.forget(deliveryId);
    }
    const prepared = await this.prepareOn(deliveryId, await this.deliveries.load(deliveryId), hooks, false);
    return prepared ?? { kind: 'settled', position: null }; // never null from the stream
  }

  /** null (only when `known`): the state did not lead to a claim; nothing was written. */
  private async prepareOn(
    deliveryId: string,
    delivery: LoadedDelivery,
    hooks: AttemptHooks,
    known: boolean,
  ): Promise<PreparedDispatch | null> {
    const { state } = delivery;
    const now = new Date();
    const target = state.accountId === null ? null : this.targets.of(state.accountId, state.endpointId, now);
    const decision = decideDispatch(state, deliveryId, target, now);
    if (known && decision.kind !== 'send') return null;
    if (decision.kind === 'skip') {
      // The read model is behind the stream: wait until it has caught up before looking again.
      return { kind: 'settled', position: await this.deliveries.head() };
    }
    if (decision.kind === 'cancel') {
      // Checked at send time too: a disable, delete or switch-off since scheduling stops it.
      const cancelled = await this.deliveries.execute(decision.command);
      return { kind: 'settled', position: cancelled.position };
    }
    // A 429 heard since it was picked: not now (it stays due; the dispatcher picks it once the pause is over).
    if (hooks.mayStart && !hooks.mayStart()) return { kind: 'settled', position: null };
    const claimed = await this.deliveries.claim(delivery, {
      kind: 'claim',
      deliveryId,
      instance: this.instance.id,
      now,
      leaseMs: this.leaseMs,
    });
    if (claimed === null) {
      // Another instance has it (or it changed since the read): look again once the read model shows why.
      this.claimConflicts?.inc();
      if (known) return null;
      return { kind: 'settled', position: await this.deliveries.head() };
    }
    const attempt = { deliveryId, delivery: claimed, target: decision.target, attemptedAt: now };

    const secrets = this.secrets.of(decision.target);
    // `kind` first, not `{ ...attempt, kind }`: see extend in @filing/platform.
    if (secrets.length === 0) return { kind: 'unsigned', ...attempt };
    return { kind: 'send', request: this.requestFor(attempt, claimed.leaseUntil, secrets), ...attempt };
  }

  /** The request the sender signs (on its thread) and sends, no later than the claim allows. */
  private requestFor(attempt: AttemptContext, leaseUntil: number | null, secrets: string[]): WebhookRequest {
    const { state } = attempt.delivery;
    const sendBy =
      leaseUntil === null
        ? undefined
        : claimSendBy(leaseUntil, this.config.webhookTimeoutMs, this.config.webhookClaimClockSkewMs ?? 0);
    return {
      url: attempt.target.url,
      eventId: state.eventId,
      // The same bytes as the Events API's item: one serialization for both.
      timestamp: Math.floor(attempt.attemptedAt.getTime() / 1000),
      body: serializeNotification(state.payload),
      secrets,
      endpointId: attempt.target.endpointId,
      sendBy,
    };
  }

  /** null: not sent (the claim's time ran out, here or in the endpoint's lane on the sender thread). */
  send(request: WebhookRequest): Promise<SendResult | null> {
    if (request.sendBy !== undefined && Date.now() > request.sendBy) {
      this.leaseLapsed?.inc();
      this.logger.warn(`A webhook request was given up unsent: its delivery claim's lease ran out before it left`);
      return Promise.resolve(null);
    }
    return this.sender.send(request);
  }

  async record(prepared: Attempt, sent: SendResult): Promise<Position | null> {
    const { result } = sent;
    const verdict = classifyAttempt(result);
    this.attempts?.inc({ outcome: result.kind === 'error' ? result.error : verdict });
    this.attemptSeconds?.observe(sent.durationMs / 1000);
    const recorded = await this.deliveries.executeOn(prepared.delivery, {
      kind: 'record-attempt',
      deliveryId: prepared.deliveryId,
      attempt: {
        attemptedAt: sent.sentAt === undefined ? prepared.attemptedAt : new Date(sent.sentAt),
        statusCode: result.kind === 'response' ? result.statusCode : null,
        error: result.kind === 'error' ? errorMessage(result.error) : null,
        durationMs: sent.durationMs,
        verdict,
        retryAfterMs: sent.retryAfterMs,
      },
      delaysMs: this.config.webhookRetryDelaysMs,
      random: Math.random(),
    });
    const disabledBy = endpointDisabledBy(result);
    if (disabledBy) await this.disableEndpoint(prepared.target, disabledBy);
    return recorded.position;
  }

  private disableEndpoint(target: DeliveryTarget, reason: 'gone'): Promise<void> {
    let pending = this.disabling.get(target.endpointId);
    if (!pending) {
      pending = this.endpoints
        .disableBySystem(target.accountId, target.endpointId, reason)
        .then((position) => {
          if (position)
            this.logger.warn(`Webhook endpoint ${target.endpointId} answered 410 Gone: disabled (reason ${reason})`);
        })
        // The attempt is recorded; the next 410 tries again.
        .catch((err: unknown) =>
          this.logger.error(
            `Disabling webhook endpoint ${target.endpointId} (${reason}) failed: ${(err as Error).message}`,
          ),
        )
        .finally(() => this.disabling.delete(target.endpointId));
      this.disabling.set(target.endpointId, pending);
    }
    return pending;
  }

  /** No secret of the endpoint can be opened: nothing is sent, and the attempt fails (and is retried). */
  private unsent(prepared: Extract<PreparedDispatch, { kind: 'unsigned' }>): SendResult {
    this.logger.error(
      `No signing secret for webhook endpoint ${prepared.target.endpointId} (one an older version kept and never imported needs a rotation); not sending`,
    );
    return { result: { kind: 'error', error: 'other' }, durationMs: 0, retryAfterMs: null };
  }
}

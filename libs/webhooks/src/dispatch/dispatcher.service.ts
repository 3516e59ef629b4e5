import { comparePositions, type Position } from '@filing/event-store';
import { APP_CONFIG, type AppConfig, Metrics, ProjectionRunner } from '@filing/platform';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { classifyAttempt, errorMessage } from '../delivery/outcome';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import type { EndpointRow } from '../endpoints/endpoint-views';
import { serializeNotification } from '../notifications/notification-mapper';
import { DeliverySignal } from '../read-model/delivery-signal';
import { cachedStatement as stmt } from '@filing/platform';
import { SecretStore } from '../secrets/secret-store';
import { signatureHeader } from '../signing/signature';
import { USER_AGENT, WebhookSender } from './webhook-sender';

export const WEBHOOK_SENDER = Symbol('WEBHOOK_SENDER');

/** Attempts in flight at once, overall and per endpoint. */
export const DISPATCHER_LIMITS = { overall: 64, perEndpoint: 16 } as const;
const MAX_IN_FLIGHT = DISPATCHER_LIMITS.overall;
const MAX_IN_FLIGHT_PER_ENDPOINT = DISPATCHER_LIMITS.perEndpoint;
/** The safety-net tick: due retries are found even if no signal rang (e.g. after a restart). */
const TICK_MS = 1000;

interface DueRow {
  id: string;
  endpoint_id: string;
}

/**
 * Sends due deliveries from the deliveries read model and records each attempt and its outcome
 * as events. Woken by the projection (new work), by a timer set to the next due retry, and by a
 * periodic tick. After an attempt, a delivery is "settling" until the read model shows its
 * outcome, so a stale row never sends it twice (its concurrency slot is free at once); after a
 * crash, whatever was in flight is still pending and is sent again (at least once, same webhook-id).
 */
@Injectable()
export class DispatcherService {
  private readonly logger = new Logger('WebhookDispatcher');
  private readonly inFlight = new Set<string>();
  /** Attempted deliveries whose outcome the read model does not show yet, with its position. */
  private readonly settling = new Map<string, Position>();
  private readonly perEndpoint = new Map<string, number>();
  private running = false;
  private pumpScheduled = false;
  private tick: NodeJS.Timeout | null = null;
  private nextDue: NodeJS.Timeout | null = null;
  private offSignal: (() => void) | null = null;
  private readonly active = new Set<Promise<void>>();
  private readonly attempts?: Counter<'outcome'>;
  private readonly attemptSeconds?: Histogram;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_SENDER) private readonly sender: WebhookSender,
    private readonly runner: ProjectionRunner,
    private readonly deliveries: DeliveryCommands,
    private readonly secrets: SecretStore,
    private readonly signal: DeliverySignal,
    @Optional() metrics?: Metrics,
  ) {
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
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.offSignal = this.signal.on(() => this.schedulePump());
    this.tick = setInterval(() => this.schedulePump(), TICK_MS);
    this.schedulePump();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.offSignal?.();
    if (this.tick) clearInterval(this.tick);
    if (this.nextDue) clearTimeout(this.nextDue);
    await Promise.allSettled([...this.active]);
  }

  private schedulePump(): void {
    if (!this.running || this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      try {
        this.pump();
      } catch (err) {
        // The read model may not exist yet at the very start; the tick tries again.
        this.logger.debug?.(`Dispatcher pump: ${(err as Error).message}`);
      }
    });
  }

  private pump(): void {
    if (!this.running || !this.runner.db.open) return;
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return;
    this.pruneSettled();
    const now = new Date().toISOString();
    const due = stmt(
      this.runner.db,
      `SELECT id, endpoint_id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT ?`,
    ).all(now, free + this.inFlight.size + this.settling.size + MAX_IN_FLIGHT) as DueRow[];
    let started = 0;
    for (const row of due) {
      if (started >= free) break;
      if (this.inFlight.has(row.id) || this.settling.has(row.id)) continue;
      const busy = this.perEndpoint.get(row.endpoint_id) ?? 0;
      if (busy >= MAX_IN_FLIGHT_PER_ENDPOINT) continue;
      this.inFlight.add(row.id);
      this.perEndpoint.set(row.endpoint_id, busy + 1);
      started++;
      const task = this.attempt(row.id)
        .catch((err: unknown) => this.logger.error(`Delivery ${row.id}: ${(err as Error).message}`, (err as Error).stack))
        .finally(() => {
          this.inFlight.delete(row.id);
          const n = (this.perEndpoint.get(row.endpoint_id) ?? 1) - 1;
          if (n <= 0) this.perEndpoint.delete(row.endpoint_id);
          else this.perEndpoint.set(row.endpoint_id, n);
          this.active.delete(task);
          this.schedulePump();
        });
      this.active.add(task);
    }
    this.armNextDue();
  }

  private pruneSettled(): void {
    if (this.settling.size === 0) return;
    const reached = this.runner.position();
    for (const [id, position] of this.settling) {
      if (reached !== null && comparePositions(reached, position) >= 0) this.settling.delete(id);
    }
  }

  /** A timer for the earliest future retry, so short test delays are not rounded up to the tick. */
  private armNextDue(): void {
    if (this.nextDue) clearTimeout(this.nextDue);
    this.nextDue = null;
    const row = stmt(
      this.runner.db,
      "SELECT min(next_attempt_at) AS next FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?",
    ).get(new Date().toISOString()) as { next: string | null };
    if (!row.next) return;
    const delay = Date.parse(row.next) - Date.now();
    if (delay > TICK_MS) return;
    this.nextDue = setTimeout(() => this.schedulePump(), Math.max(0, delay) + 1);
  }

  private async attempt(deliveryId: string): Promise<void> {
    const loaded = await this.deliveries.load(deliveryId);
    const { state } = loaded;
    const notDue = state.nextAttemptAt !== null && Date.parse(state.nextAttemptAt) > Date.now();
    if (!state.exists || state.status !== 'pending' || notDue) {
      // The read model is behind the stream: wait until it has caught up before looking again.
      this.settled(deliveryId, await this.deliveries.head());
      return;
    }

    const endpoint = stmt(this.runner.db, 'SELECT * FROM webhook_endpoints WHERE id = ?').get(state.endpointId) as EndpointRow | undefined;
    const switchRow = stmt(this.runner.db, 'SELECT notifications_enabled FROM webhook_settings WHERE account_id = ?').get(state.accountId) as
      | { notifications_enabled: number }
      | undefined;
    // Checked again at send time: a disable, delete or switch-off since scheduling stops it.
    const stopReason =
      !endpoint || endpoint.deleted === 1
        ? 'endpoint disabled or deleted'
        : endpoint.enabled !== 1
          ? 'endpoint disabled or deleted'
          : switchRow?.notifications_enabled !== 1
            ? 'webhook notifications switched off'
            : null;
    if (stopReason || !endpoint) {
      const r = await this.deliveries.cancel(deliveryId, stopReason ?? 'endpoint disabled or deleted');
      this.settled(deliveryId, r.position);
      return;
    }

    const now = new Date();
    const secrets = [this.secrets.get(endpoint.id, endpoint.secret_fingerprint)];
    if (endpoint.previous_expires_at && Date.parse(endpoint.previous_expires_at) > now.getTime()) {
      secrets.push(this.secrets.get(endpoint.id, endpoint.previous_fingerprint));
    }
    const usable = secrets.filter((s): s is string => s !== null);

    const body = serializeNotification(state.payload);
    const timestamp = Math.floor(now.getTime() / 1000);
    let outcome;
    if (usable.length === 0) {
      outcome = { result: { kind: 'error' as const, error: 'other' as const }, durationMs: 0, retryAfterMs: null };
      this.logger.error(`No signing secret on this server for webhook endpoint ${endpoint.id}; not sending`);
    } else {
      outcome = await this.sender.send(
        endpoint.url,
        {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': state.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(usable, state.eventId, timestamp, body),
        },
        body,
      );
    }
    const { result } = outcome;
    const verdict = classifyAttempt(result);
    this.attempts?.inc({ outcome: result.kind === 'error' ? result.error : verdict });
    this.attemptSeconds?.observe(outcome.durationMs / 1000);
    const recorded = await this.deliveries.executeOn(loaded, {
      kind: 'record-attempt',
      deliveryId,
      attempt: {
        attemptedAt: now,
        statusCode: result.kind === 'response' ? result.statusCode : null,
        error: result.kind === 'error' ? errorMessage(result.error) : null,
        durationMs: outcome.durationMs,
        verdict,
        retryAfterMs: outcome.retryAfterMs,
      },
      delaysMs: this.config.webhookRetryDelaysMs,
      random: Math.random(),
    });
    this.settled(deliveryId, recorded.position);
  }

  /** Keeps the delivery from being picked again until the read model shows what was just written. */
  private settled(deliveryId: string, position: Position | null): void {
    if (position !== null) this.settling.set(deliveryId, position);
  }
}

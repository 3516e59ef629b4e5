import type { Clock } from '../clock';
import { Deduplicator, type DedupeStore } from './dedupe';
import type { WebhookEvent } from './events';
import { type VerifyOptions, type WebhookHeaders, WebhookVerificationError, verifyWebhook } from './verify';

export interface WebhookHandlerOptions<T = WebhookEvent> {
  /** The endpoint's signing secret(s); during a rotation, both. */
  readonly secrets: string | readonly string[];
  /** Where processed ids are remembered (MemoryDedupeStore, SqliteDedupeStore, or yours). */
  readonly store: DedupeStore;
  /** Your code, run at most once per `webhook-id` (until the store's TTL). Throw to have it retried. */
  readonly onEvent: (event: T, delivery: { readonly id: string; readonly timestamp: number }) => Promise<void> | void;
  readonly ttlMs?: number;
  readonly leaseMs?: number;
  readonly toleranceSeconds?: number;
  readonly clock?: Clock;
}

/**
 * What to answer the sender. The service retries 5xx and 429 and gives up at once on other
 * 4xx, so: forged/stale → 400/401 (never retried), duplicate → 200, in progress elsewhere → 503
 * with Retry-After (retried later, after the first attempt finished), your handler threw → 500
 * (retried).
 */
export type WebhookHandlerResult<T = WebhookEvent> =
  | { readonly outcome: 'processed' | 'duplicate'; readonly status: 200; readonly id: string; readonly event: T }
  | { readonly outcome: 'in_progress'; readonly status: 503; readonly id: string; readonly retryAfterSeconds: number }
  | { readonly outcome: 'rejected'; readonly status: 400 | 401; readonly error: WebhookVerificationError }
  | { readonly outcome: 'failed'; readonly status: 500; readonly id: string; readonly error: unknown };

/**
 * Verify + deduplicate + dispatch, independent of any HTTP framework: give it the raw body and
 * the headers, send back `result.status`.
 *
 * ```ts
 * const handle = createWebhookHandler({ secrets: [process.env.WEBHOOK_SECRET!], store: new MemoryDedupeStore(),
 *   onEvent: (event) => console.log(event.event_type) });
 * const result = await handle(rawBody, req.headers);
 * res.writeHead(result.status).end();
 * ```
 */
export function createWebhookHandler<T = WebhookEvent>(options: WebhookHandlerOptions<T>) {
  const deduplicator = new Deduplicator({
    store: options.store,
    ttlMs: options.ttlMs,
    leaseMs: options.leaseMs,
    clock: options.clock,
  });
  const verifyOptions: VerifyOptions = { toleranceSeconds: options.toleranceSeconds, clock: options.clock };
  const secrets = options.secrets;

  return async function handleWebhook(
    payload: string | Buffer,
    headers: WebhookHeaders,
  ): Promise<WebhookHandlerResult<T>> {
    let verified;
    try {
      verified = verifyWebhook<T>(payload, headers, secrets, verifyOptions);
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        const status = err.reason === 'no_matching_signature' ? 401 : 400;
        return { outcome: 'rejected', status, error: err };
      }
      throw err;
    }
    const { id, timestamp, payload: event } = verified;
    try {
      const outcome = await deduplicator.run(id, () => options.onEvent(event, { id, timestamp }));
      if (outcome.status === 'in_progress') return { outcome: 'in_progress', status: 503, id, retryAfterSeconds: 5 };
      return { outcome: outcome.status, status: 200, id, event };
    } catch (error) {
      return { outcome: 'failed', status: 500, id, error };
    }
  };
}

import type { Awaitable } from './dedupe';
import type { WebhookEvent } from './events';

/** Where `latestOnly` keeps the highest `resource_version` it has handled per resource. */
export interface VersionStore {
  get(resource: string): Awaitable<number | undefined>;
  set(resource: string, version: number): Awaitable<void>;
}

/** In memory, per process: fine for one receiver process; share a database table between several. */
export class MemoryVersionStore implements VersionStore {
  private readonly versions = new Map<string, number>();

  get(resource: string): number | undefined {
    return this.versions.get(resource);
  }

  set(resource: string, version: number): void {
    this.versions.set(resource, version);
  }
}

/**
 * The resource a notification is about, as `<kind>:<id>` (`order:0193…`): the resource whose
 * `version` its `resource_version` is. An entity's, a document's, … and for the operational
 * ones the endpoint (`webhook_endpoint.*`) or the delivery (`webhook_delivery.failed`).
 */
export function resourceOf(event: WebhookEvent): string {
  switch (event.event_type) {
    case 'entity.created':
    case 'entity.updated':
      return `entity:${event.entity_id}`;
    case 'document.created':
    case 'document.updated':
    case 'document.deleted':
      return `document:${event.document_id}`;
    case 'jurisdiction.created':
    case 'jurisdiction.updated':
      return `jurisdiction:${event.jurisdiction_id}`;
    case 'task.created':
      return `task:${event.task_id}`;
    case 'order.submitted':
    case 'order.cancelled':
    case 'order.completed':
      return `order:${event.order_id}`;
    case 'webhook_endpoint.disabled':
    case 'webhook_endpoint.failing':
      return `webhook_endpoint:${event.endpoint_id}`;
    case 'webhook_delivery.failed':
      return `webhook_delivery:${event.delivery_id}`;
  }
}

export interface LatestOnlyOptions {
  /** Default: a MemoryVersionStore. */
  readonly store?: VersionStore;
  /** Called for a notification older than (or as old as) one already handled, instead of the handler. */
  readonly onStale?: (event: WebhookEvent, latest: number) => Awaitable<void>;
}

/**
 * Wraps a notification handler so it only sees news: deliveries are concurrent and unordered, so
 * an `order.submitted` may arrive after the `order.completed` that followed it. The handler runs
 * only for a `resource_version` higher than every one it has handled for that resource; the
 * version is recorded once it returns (a handler that throws leaves it, so a retry runs again).
 * A stale one goes to `onStale` instead. Fits `createWebhookHandler`'s `onEvent`.
 *
 * ```ts
 * const onEvent = latestOnly(async (event) => { await saveStatus(event); });
 * createWebhookHandler({ secret, dedupe, onEvent });
 * ```
 *
 * Two notifications of one resource handled at the same moment may both run; give each resource
 * one queue (or a store with a compare-and-set) if that matters.
 */
export function latestOnly<E extends WebhookEvent>(
  handler: (event: E) => Awaitable<void>,
  options: LatestOnlyOptions = {},
): (event: E) => Promise<void> {
  const store = options.store ?? new MemoryVersionStore();
  return async (event) => {
    const resource = resourceOf(event);
    const latest = await store.get(resource);
    if (latest !== undefined && event.resource_version <= latest) {
      await options.onStale?.(event, latest);
      return;
    }
    await handler(event);
    const now = await store.get(resource);
    if (now === undefined || event.resource_version > now) await store.set(resource, event.resource_version);
  };
}

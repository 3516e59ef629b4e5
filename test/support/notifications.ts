/**
 * Notifications for the Events API and webhook tests: rounds of API calls that cause all eleven
 * notification types, and the account's notifications as the event store holds them (the
 * expected answer, read straight from `$all`).
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import type { Api } from './webhooks';
import type { TestService } from './service';

const V1 = '/external-api/v1';

/** CONTRACT.md §4: domain event type → notification type. */
export const NOTIFICATION_TYPE_OF: Readonly<Record<string, string>> = {
  'entities.EntityCreated': 'entity.created',
  'entities.EntityUpdated': 'entity.updated',
  'documents.DocumentAdded': 'document.created',
  'documents.DocumentUpdated': 'document.updated',
  'documents.DocumentDeleted': 'document.deleted',
  'jurisdictions.JurisdictionAdded': 'jurisdiction.created',
  'jurisdictions.JurisdictionUpdated': 'jurisdiction.updated',
  'tasks.TaskCreated': 'task.created',
  'orders.OrderSubmitted': 'order.submitted',
  'orders.OrderCancelled': 'order.cancelled',
  'orders.OrderCompleted': 'order.completed',
};

/** Notifications one `notificationRound` causes: each of the eleven types, order.submitted twice. */
export const NOTIFICATIONS_PER_ROUND = 12;

async function ok<T = { id: string }>(api: Api, method: string, path: string, body?: unknown): Promise<T> {
  const res = await api(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/**
 * One round for an account: every notification type once (order.submitted twice), in this order,
 * plus a task update (not a notification). `operator` completes the order (operator API).
 */
export async function notificationRound(api: Api, operator: Api, n: number): Promise<void> {
  const entity = await ok(api, 'POST', `${V1}/entities`, { name: `Round ${n} LLC`, entity_type: 'llc' });
  await ok(api, 'PATCH', `${V1}/entities/${entity.id}`, { status: 'inactive' });
  const jurisdiction = await ok(api, 'POST', `${V1}/jurisdictions`, {
    entity_id: entity.id,
    code: 'US-DE',
    registration_type: 'domestic',
  });
  await ok(api, 'PATCH', `${V1}/jurisdictions/${jurisdiction.id}`, { status: 'active' });
  const task = await ok(api, 'POST', `${V1}/tasks`, { entity_id: entity.id, title: `Task ${n}` });
  await ok(api, 'PATCH', `${V1}/tasks/${task.id}`, { status: 'completed' });
  const content = Buffer.from(`document ${n}`).toString('base64');
  const document = await ok(api, 'POST', `${V1}/documents`, {
    entity_id: entity.id,
    title: `Certificate ${n}`,
    document_type: 'certificate',
    content_type: 'text/plain',
    content_base64: content,
  });
  await ok(api, 'PATCH', `${V1}/documents/${document.id}`, { title: `Certificate ${n} (signed)` });
  await ok(api, 'DELETE', `${V1}/documents/${document.id}`);
  const cancelled = await ok(api, 'POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'annual_report' });
  await ok(api, 'POST', `${V1}/orders/${cancelled.id}/cancel`, { reason: 'changed our mind' });
  const completed = await ok(api, 'POST', `${V1}/orders`, { entity_id: entity.id, order_type: 'formation' });
  await ok(operator, 'POST', `/internal-api/v1/orders/${completed.id}/complete`);
}

export interface StoredNotification {
  readonly event_id: string;
  readonly event_type: string;
  readonly occurred_at: string;
  readonly position: string;
}

/** The account's notifications in the store's `$all` order. */
export async function storedNotifications(service: TestService, accountId: string): Promise<StoredNotification[]> {
  const all = await service.app.get<EventStore>(EVENT_STORE).readAll();
  return all
    .filter((e) => e.metadata.account_id === accountId && e.type in NOTIFICATION_TYPE_OF)
    .map((e) => ({
      event_id: e.id,
      event_type: NOTIFICATION_TYPE_OF[e.type],
      occurred_at: e.metadata.occurred_at as string,
      position: `${e.position.commit}/${e.position.prepare}`,
    }));
}

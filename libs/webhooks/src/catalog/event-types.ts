/** The notification catalog (CONTRACT.md §4): what the settings screen and `GET /webhook-event-types` list. */
export interface WebhookEventType {
  readonly name: string;
  readonly label: string;
  readonly category: string;
}

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze([
  { name: 'entity.created', label: 'New Entity', category: 'Entities' },
  { name: 'entity.updated', label: 'Update Entity', category: 'Entities' },
  { name: 'document.created', label: 'New Document', category: 'Documents' },
  { name: 'document.updated', label: 'Update Document', category: 'Documents' },
  { name: 'document.deleted', label: 'Delete Document', category: 'Documents' },
  { name: 'jurisdiction.created', label: 'New Jurisdiction', category: 'Jurisdictions' },
  { name: 'jurisdiction.updated', label: 'Update Jurisdiction', category: 'Jurisdictions' },
  { name: 'task.created', label: 'New Task Instance', category: 'Tasks' },
  { name: 'order.submitted', label: 'Order Submitted', category: 'Orders' },
  { name: 'order.cancelled', label: 'Order Cancelled', category: 'Orders' },
  { name: 'order.completed', label: 'Order Completed', category: 'Orders' },
  { name: 'webhook_endpoint.disabled', label: 'Endpoint Disabled', category: 'Webhooks' },
  { name: 'webhook_endpoint.failing', label: 'Endpoint Failing', category: 'Webhooks' },
  { name: 'webhook_delivery.failed', label: 'Delivery Failed', category: 'Webhooks' },
]);

/**
 * Operational notifications (CONTRACT.md §4): about the webhooks themselves, not the account's
 * resources. Never part of "all events": only an endpoint (or an Events API filter) that names
 * one gets it, so receivers that take everything see nothing new.
 */
export const OPERATIONAL_EVENT_TYPES: readonly WebhookEventTypeName[] = Object.freeze([
  'webhook_endpoint.disabled',
  'webhook_endpoint.failing',
  'webhook_delivery.failed',
]);

export type WebhookEventTypeName = (typeof WEBHOOK_EVENT_TYPES)[number]['name'];

const NAMES = new Set(WEBHOOK_EVENT_TYPES.map((t) => t.name));

export function isWebhookEventType(name: string): boolean {
  return NAMES.has(name);
}

export function isOperationalEventType(name: string): boolean {
  return OPERATIONAL_EVENT_TYPES.includes(name);
}

/** An endpoint's selection: empty means every type but the operational ones, which must be named. */
export function selectionIncludes(selection: readonly string[], eventType: string): boolean {
  return selection.length === 0 ? !isOperationalEventType(eventType) : selection.includes(eventType);
}

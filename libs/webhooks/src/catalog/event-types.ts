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
]);

export type WebhookEventTypeName = (typeof WEBHOOK_EVENT_TYPES)[number]['name'];

const NAMES = new Set(WEBHOOK_EVENT_TYPES.map((t) => t.name));

export function isWebhookEventType(name: string): boolean {
  return NAMES.has(name);
}

/** An endpoint's selection: empty means every type. */
export function selectionIncludes(selection: readonly string[], eventType: string): boolean {
  return selection.length === 0 || selection.includes(eventType);
}

import { isWebhookEventType, selectionIncludes, WEBHOOK_EVENT_TYPES } from './event-types';

describe('event-type catalog', () => {
  it('lists the eleven types and the three operational ones with the contract labels and categories', () => {
    expect(WEBHOOK_EVENT_TYPES.map((t) => [t.category, t.label, t.name])).toEqual([
      ['Entities', 'New Entity', 'entity.created'],
      ['Entities', 'Update Entity', 'entity.updated'],
      ['Documents', 'New Document', 'document.created'],
      ['Documents', 'Update Document', 'document.updated'],
      ['Documents', 'Delete Document', 'document.deleted'],
      ['Jurisdictions', 'New Jurisdiction', 'jurisdiction.created'],
      ['Jurisdictions', 'Update Jurisdiction', 'jurisdiction.updated'],
      ['Tasks', 'New Task Instance', 'task.created'],
      ['Orders', 'Order Submitted', 'order.submitted'],
      ['Orders', 'Order Cancelled', 'order.cancelled'],
      ['Orders', 'Order Completed', 'order.completed'],
      ['Webhooks', 'Endpoint Disabled', 'webhook_endpoint.disabled'],
      ['Webhooks', 'Endpoint Failing', 'webhook_endpoint.failing'],
      ['Webhooks', 'Delivery Failed', 'webhook_delivery.failed'],
    ]);
  });

  it('knows its names, and an empty selection means all', () => {
    expect(isWebhookEventType('order.completed')).toBe(true);
    expect(isWebhookEventType('task.updated')).toBe(false);
    expect(selectionIncludes([], 'task.created')).toBe(true);
    expect(selectionIncludes(['entity.created'], 'task.created')).toBe(false);
  });

  it('leaves the operational notification out of "all": an endpoint gets it only by naming it', () => {
    expect(isWebhookEventType('webhook_endpoint.disabled')).toBe(true);
    expect(selectionIncludes([], 'webhook_endpoint.disabled')).toBe(false);
    expect(selectionIncludes(['entity.created'], 'webhook_endpoint.disabled')).toBe(false);
    expect(selectionIncludes(['webhook_endpoint.disabled'], 'webhook_endpoint.disabled')).toBe(true);
    expect(selectionIncludes(['webhook_endpoint.disabled'], 'entity.created')).toBe(false);
  });
});

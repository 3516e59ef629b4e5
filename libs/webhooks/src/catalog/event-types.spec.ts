import { isWebhookEventType, selectionIncludes, WEBHOOK_EVENT_TYPES } from './event-types';

describe('event-type catalog', () => {
  it('lists the eleven types with the contract labels and categories', () => {
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
    ]);
  });

  it('knows its names, and an empty selection means all', () => {
    expect(isWebhookEventType('order.completed')).toBe(true);
    expect(isWebhookEventType('task.updated')).toBe(false);
    expect(selectionIncludes([], 'task.created')).toBe(true);
    expect(selectionIncludes(['entity.created'], 'task.created')).toBe(false);
  });
});

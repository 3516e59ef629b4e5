import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_EVENT_TYPES } from '../catalog/event-types';
import { mapNotification, NOTIFICATIONS, publishedEventTypes } from './notification-mapper';
import { toOpenApi30 } from './payload-schemas';

const at = '2026-11-22T10:00:00.000Z';
const E = '0193a000-0000-7000-8000-00000000000e';
const O = '0193a000-0000-7000-8000-00000000000f';
const R = '0193a000-0000-7000-8000-000000000010';

/** A domain event of each table entry, as the families and the webhooks write them. */
const FIXTURES: Record<string, Record<string, unknown>> = {
  'entities.EntityCreated': { entity_id: R, name: 'Acme', status: 'active' },
  'entities.EntityUpdated': { entity_id: R, status: 'dissolved' },
  'documents.DocumentAdded': { document_id: R, entity_id: E, order_id: null },
  'documents.DocumentUpdated': { document_id: R, entity_id: E, order_id: O },
  'documents.DocumentDeleted': { document_id: R, entity_id: E },
  'jurisdictions.JurisdictionAdded': { jurisdiction_id: R, entity_id: E, status: 'pending' },
  'jurisdictions.JurisdictionUpdated': { jurisdiction_id: R, entity_id: E, status: 'active' },
  'tasks.TaskCreated': { task_id: R, entity_id: E },
  'tasks.TaskUpdated': { task_id: R, status: 'completed' },
  'orders.OrderSubmitted': { order_id: R, entity_id: E },
  'orders.OrderCancelled': { order_id: R, entity_id: E },
  'orders.OrderCompleted': { order_id: R, entity_id: E },
  'webhooks.EndpointDisabled': { endpoint_id: R, reason: 'gone' },
  'webhooks.EndpointFailing': { endpoint_id: R, failing_since: at, last_failure_at: at },
  'webhooks.DeliveryFailed': {
    delivery_id: R,
    reason: 'retries exhausted',
    account_id: 'acc',
    endpoint_id: E,
    event_id: O,
    event_type: 'order.submitted',
  },
};

function ajv() {
  const validator = new Ajv2020({ strict: true, allErrors: true });
  addFormats(validator);
  return validator;
}

describe('the notification table and its schemas', () => {
  it('maps a fixture of every entry to a payload its own schema accepts, with resource_version', () => {
    const validator = ajv();
    expect(Object.keys(FIXTURES).sort()).toEqual(Object.keys(NOTIFICATIONS).sort());
    for (const [type, entry] of Object.entries(NOTIFICATIONS)) {
      const event = { id: R, revision: 4n, type, streamId: `x-${R}`, data: FIXTURES[type] as never, occurredAt: at };
      const { notification } = mapNotification(event, { entity_id: E, order_id: null, status: 'open' });
      if (entry.toPayload === null) {
        expect(notification).toBeNull();
        continue;
      }
      const validate = validator.compile(entry.schema);
      expect({ type, valid: validate(notification), errors: validate.errors ?? null }).toEqual({
        type,
        valid: true,
        errors: null,
      });
      expect(notification).toMatchObject({ event_type: entry.event_type, resource_version: 4 });
    }
  });

  it('rejects a payload with a field the contract does not have, or one missing', () => {
    const validator = ajv();
    const event = {
      id: R,
      revision: 0n,
      type: 'orders.OrderSubmitted',
      streamId: `order-${R}`,
      data: { order_id: R, entity_id: E },
      occurredAt: at,
    };
    const payload = mapNotification(event, undefined).notification!;
    const validate = validator.compile(NOTIFICATIONS['orders.OrderSubmitted'].schema);
    expect(validate(payload)).toBe(true);
    expect(validate({ ...payload, extra: 1 })).toBe(false);
    const { resource_version: _dropped, ...without } = payload;
    expect(validate(without)).toBe(false);
  });

  it('publishes one entry per catalog type, in the catalog order, with a schema version', () => {
    const published = publishedEventTypes();
    expect(published.map((t) => t.name)).toEqual(WEBHOOK_EVENT_TYPES.map((t) => t.name));
    for (const t of published) {
      expect(t.schema).toMatchObject({ title: t.name, additionalProperties: false });
      expect(t.schema_version).toBe(1);
    }
  });

  it("turns a schema into OpenAPI 3.0's dialect: const as enum, a nullable type, no $schema", () => {
    const doc = toOpenApi30(NOTIFICATIONS['documents.DocumentAdded'].schema) as {
      $schema?: string;
      properties: Record<string, Record<string, unknown>>;
    };
    expect(doc.$schema).toBeUndefined();
    expect(doc.properties.event_type).toEqual({ type: 'string', enum: ['document.created'] });
    expect(doc.properties.order_id).toMatchObject({ type: 'string', nullable: true, format: 'uuid' });
  });
});

import {
  mapNotification,
  type MappableEvent,
  notificationOf,
  type ResourceFacts,
  serializeNotification,
} from './notification-mapper';

const at = '2026-11-22T10:00:00.000Z';
let n = 0;
const revisions = new Map<string, bigint>();
function ev(type: string, streamId: string, data: MappableEvent['data']): MappableEvent {
  n++;
  const revision = revisions.get(streamId) ?? 0n;
  revisions.set(streamId, revision + 1n);
  const id = `0193a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  return { id, revision, type, streamId, data, occurredAt: at };
}

/**
 * Runs a stream's events through the mapper as the fan-out does, carrying facts along. Each
 * payload's `resource_version` is its event's stream revision; checked here, then left out.
 */
function run(events: MappableEvent[]) {
  let facts: ResourceFacts | undefined;
  return events.map((e) => {
    const r = mapNotification(e, facts);
    facts = r.facts ?? facts;
    if (!r.notification) return null;
    const { resource_version, ...rest } = r.notification;
    expect(resource_version).toBe(Number(e.revision));
    return rest;
  });
}

describe('notification mapper', () => {
  it('entities: created and updated with entity_id and status', () => {
    const created = ev('entities.EntityCreated', 'entity-E1', { entity_id: 'E1', name: 'Acme', status: 'active' });
    const updated = ev('entities.EntityUpdated', 'entity-E1', { entity_id: 'E1', name: 'Acme 2' });
    const dissolved = ev('entities.EntityUpdated', 'entity-E1', { entity_id: 'E1', status: 'dissolved' });
    expect(run([created, updated, dissolved])).toEqual([
      { event_id: created.id, event_type: 'entity.created', timestamp: at, entity_id: 'E1', status: 'active' },
      { event_id: updated.id, event_type: 'entity.updated', timestamp: at, entity_id: 'E1', status: 'active' },
      { event_id: dissolved.id, event_type: 'entity.updated', timestamp: at, entity_id: 'E1', status: 'dissolved' },
    ]);
  });

  it('jurisdictions: created and updated with jurisdiction_id, entity_id, status', () => {
    const added = ev('jurisdictions.JurisdictionAdded', 'jurisdiction-J1', {
      jurisdiction_id: 'J1',
      entity_id: 'E1',
      code: 'US-DE',
      status: 'pending',
    });
    const updated = ev('jurisdictions.JurisdictionUpdated', 'jurisdiction-J1', {
      jurisdiction_id: 'J1',
      status: 'active',
    });
    expect(run([added, updated])).toEqual([
      {
        event_id: added.id,
        event_type: 'jurisdiction.created',
        timestamp: at,
        jurisdiction_id: 'J1',
        entity_id: 'E1',
        status: 'pending',
      },
      {
        event_id: updated.id,
        event_type: 'jurisdiction.updated',
        timestamp: at,
        jurisdiction_id: 'J1',
        entity_id: 'E1',
        status: 'active',
      },
    ]);
  });

  it('documents: created, updated, deleted with order_id (or null) and the fixed statuses', () => {
    const added = ev('documents.DocumentAdded', 'document-D1', {
      document_id: 'D1',
      entity_id: 'E1',
      order_id: null,
      title: 't',
    });
    const updated = ev('documents.DocumentUpdated', 'document-D1', { document_id: 'D1', title: 'u' });
    const deleted = ev('documents.DocumentDeleted', 'document-D1', { document_id: 'D1' });
    const withOrder = ev('documents.DocumentAdded', 'document-D2', {
      document_id: 'D2',
      entity_id: 'E1',
      order_id: 'O1',
    });
    expect([...run([added, updated, deleted]), ...run([withOrder])]).toEqual([
      {
        event_id: added.id,
        event_type: 'document.created',
        timestamp: at,
        document_id: 'D1',
        entity_id: 'E1',
        order_id: null,
        status: 'available',
      },
      {
        event_id: updated.id,
        event_type: 'document.updated',
        timestamp: at,
        document_id: 'D1',
        entity_id: 'E1',
        order_id: null,
        status: 'available',
      },
      {
        event_id: deleted.id,
        event_type: 'document.deleted',
        timestamp: at,
        document_id: 'D1',
        entity_id: 'E1',
        order_id: null,
        status: 'deleted',
      },
      {
        event_id: withOrder.id,
        event_type: 'document.created',
        timestamp: at,
        document_id: 'D2',
        entity_id: 'E1',
        order_id: 'O1',
        status: 'available',
      },
    ]);
  });

  it('tasks: created is a notification, updated is none', () => {
    const created = ev('tasks.TaskCreated', 'task-T1', { task_id: 'T1', entity_id: 'E1', title: 'x', status: 'open' });
    const updated = ev('tasks.TaskUpdated', 'task-T1', { task_id: 'T1', status: 'completed' });
    expect(run([created, updated])).toEqual([
      {
        event_id: created.id,
        event_type: 'task.created',
        timestamp: at,
        task_id: 'T1',
        entity_id: 'E1',
        status: 'open',
      },
      null,
    ]);
  });

  it('orders: submitted, cancelled, completed with their fixed statuses', () => {
    const submitted = ev('orders.OrderSubmitted', 'order-O1', {
      order_id: 'O1',
      entity_id: 'E1',
      order_type: 'formation',
    });
    const cancelled = ev('orders.OrderCancelled', 'order-O1', { order_id: 'O1', reason: null });
    const completed = ev('orders.OrderCompleted', 'order-O2', { order_id: 'O2', entity_id: 'E2' });
    expect([...run([submitted, cancelled]), ...run([completed])]).toEqual([
      {
        event_id: submitted.id,
        event_type: 'order.submitted',
        timestamp: at,
        order_id: 'O1',
        entity_id: 'E1',
        status: 'submitted',
      },
      {
        event_id: cancelled.id,
        event_type: 'order.cancelled',
        timestamp: at,
        order_id: 'O1',
        entity_id: 'E1',
        status: 'cancelled',
      },
      {
        event_id: completed.id,
        event_type: 'order.completed',
        timestamp: at,
        order_id: 'O2',
        entity_id: 'E2',
        status: 'completed',
      },
    ]);
  });

  it("an endpoint disabled by the service (410 Gone, failing) is webhook_endpoint.disabled; a user's disable is none", () => {
    const gone = ev('webhooks.EndpointDisabled', 'webhookendpoint-W1', { endpoint_id: 'W1', reason: 'gone' });
    const failing = ev('webhooks.EndpointDisabled', 'webhookendpoint-W2', {
      endpoint_id: 'W2',
      reason: 'failing',
      failing_since: at,
    });
    const manual = ev('webhooks.EndpointDisabled', 'webhookendpoint-W3', { endpoint_id: 'W3', reason: 'manual' });
    const schema1 = ev('webhooks.EndpointDisabled', 'webhookendpoint-W4', { endpoint_id: 'W4' });
    expect(run([gone, failing, manual, schema1])).toEqual([
      {
        event_id: gone.id,
        event_type: 'webhook_endpoint.disabled',
        timestamp: at,
        endpoint_id: 'W1',
        reason: 'gone',
        status: 'disabled',
      },
      {
        event_id: failing.id,
        event_type: 'webhook_endpoint.disabled',
        timestamp: at,
        endpoint_id: 'W2',
        reason: 'failing',
        status: 'disabled',
      },
      null,
      null,
    ]);
  });

  it('takes the resource id from the stream when the data does not carry it', () => {
    const created = ev('entities.EntityCreated', 'entity-E9', { name: 'x' });
    expect(run([created])[0]).toEqual(expect.objectContaining({ entity_id: 'E9', status: 'active' }));
  });

  it('ignores events of other contexts', () => {
    expect(mapNotification(ev('auth.ClientCreated', 'client-C1', {}), undefined)).toEqual({
      notification: null,
      facts: null,
    });
    expect(mapNotification(ev('webhooks.EndpointCreated', 'webhookendpoint-1', {}), undefined).notification).toBeNull();
  });

  it("reads a stored event: its account and time from the metadata, the store's time when the metadata has none", () => {
    const data = { entity_id: 'E1', status: 'active' };
    const stored = {
      id: 'ev-1',
      revision: 3n,
      type: 'entities.EntityCreated',
      streamId: 'entity-E1',
      data,
      created: new Date('2026-11-22T11:00:00.000Z'),
    };
    const withMeta = notificationOf({ ...stored, metadata: { account_id: 'A1', occurred_at: at } }, undefined);
    expect(withMeta).toMatchObject({
      accountId: 'A1',
      occurredAt: at,
      notification: { event_id: 'ev-1', timestamp: at },
    });
    const bare = notificationOf({ ...stored, metadata: {} }, undefined);
    expect(bare).toMatchObject({ accountId: null, occurredAt: '2026-11-22T11:00:00.000Z' });
    // The wire form keeps the mapper's field order: what receivers and the Events API both get.
    expect(serializeNotification(withMeta.notification!)).toBe(
      `{"event_id":"ev-1","timestamp":"${at}","event_type":"entity.created","entity_id":"E1","status":"active","resource_version":3}`,
    );
  });
  it('keeps each payload and the facts it leaves byte for byte: key order is part of what is stored and sent', () => {
    const bytes = (type: string, streamId: string, data: MappableEvent['data'], known?: ResourceFacts) => {
      const r = mapNotification({ id: 'ev-1', revision: 2n, type, streamId, data, occurredAt: at }, known);
      return [JSON.stringify(r.notification), JSON.stringify(r.facts)];
    };
    const head = `"event_id":"ev-1","timestamp":"${at}"`;
    expect(
      bytes('jurisdictions.JurisdictionAdded', 'jurisdiction-J1', { jurisdiction_id: 'J1', entity_id: 'E1' }),
    ).toEqual([
      `{${head},"event_type":"jurisdiction.created","jurisdiction_id":"J1","entity_id":"E1","status":"pending","resource_version":2}`,
      '{"entity_id":"E1","order_id":null,"status":"pending"}',
    ]);
    const known = { entity_id: 'E1', order_id: 'O1', status: 'available' };
    expect(bytes('documents.DocumentDeleted', 'document-D1', { document_id: 'D1' }, known)).toEqual([
      `{${head},"event_type":"document.deleted","document_id":"D1","entity_id":"E1","order_id":"O1","status":"deleted","resource_version":2}`,
      '{"entity_id":"E1","order_id":"O1","status":"deleted"}',
    ]);
    expect(bytes('tasks.TaskUpdated', 'task-T1', { task_id: 'T1', status: 'done' }, known)).toEqual([
      'null',
      '{"entity_id":"E1","order_id":"O1","status":"done"}',
    ]);
    expect(bytes('orders.OrderCancelled', 'order-O1', { order_id: 'O1' }, known)).toEqual([
      `{${head},"event_type":"order.cancelled","order_id":"O1","entity_id":"E1","status":"cancelled","resource_version":2}`,
      '{"entity_id":"E1","order_id":"O1","status":"cancelled"}',
    ]);
    expect(bytes('entities.EntityUpdated', 'entity-E1', { name: 'x' }, known)).toEqual([
      `{${head},"event_type":"entity.updated","entity_id":"E1","status":"available","resource_version":2}`,
      '{"entity_id":"E1","order_id":"O1","status":"available"}',
    ]);
  });
});

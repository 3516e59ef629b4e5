import { type RecordedEnvelope, upcast } from '@filing/platform';
import { EndpointEvents } from '../endpoints/endpoint.events';
import { WEBHOOK_UPCASTERS } from './upcasters';

function stored(type: string, data: object, schemaVersion: number): RecordedEnvelope {
  return {
    id: 'e1',
    type,
    data,
    streamId: 'webhookendpoint-ep1',
    revision: 3n,
    position: { commit: 10n, prepare: 10n },
    metadata: {
      account_id: 'acc',
      actor: 'user:u1',
      correlation_id: 'c1',
      causation_id: null,
      occurred_at: '2026-11-22T10:00:00.000Z',
      schema_version: schemaVersion,
    },
  } as unknown as RecordedEnvelope;
}

describe('webhook upcasters', () => {
  it('reads a schema 1 EndpointDisabled (no reason) as a manual disable, keeping the rest', () => {
    const old = stored(EndpointEvents.EndpointDisabled, { endpoint_id: 'ep1' }, 1);
    const current = upcast(WEBHOOK_UPCASTERS, old);
    expect(current.data).toEqual({ endpoint_id: 'ep1', reason: 'manual' });
    expect([current.id, current.metadata, current.revision]).toEqual([old.id, old.metadata, old.revision]);
    expect(old.data).toEqual({ endpoint_id: 'ep1' }); // the stored event is not changed
  });

  it('keeps a reason a schema 1 disable already carried', () => {
    const old = stored(EndpointEvents.EndpointDisabled, { endpoint_id: 'ep1', reason: 'gone' }, 1);
    expect(upcast(WEBHOOK_UPCASTERS, old).data).toEqual({ endpoint_id: 'ep1', reason: 'gone' });
  });

  it('passes current events and types without an upcaster through unchanged', () => {
    const disabled = stored(EndpointEvents.EndpointDisabled, { endpoint_id: 'ep1', reason: 'failing' }, 2);
    const created = stored(EndpointEvents.EndpointCreated, { endpoint_id: 'ep1' }, 1);
    expect(upcast(WEBHOOK_UPCASTERS, disabled)).toBe(disabled);
    expect(upcast(WEBHOOK_UPCASTERS, created)).toBe(created);
  });
});

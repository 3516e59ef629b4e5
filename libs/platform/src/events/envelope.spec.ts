import type { RecordedEvent } from '@filing/event-store';
import {
  buildMetadata,
  fromRecorded,
  InvalidEnvelopeError,
  parseStreamName,
  streamName,
  toEventData,
  type CommandContext,
} from './envelope';

const context: CommandContext = {
  account_id: 'acc-1',
  actor: 'client:c1',
  correlation_id: 'req-1',
  causation_id: null,
};

function recorded(metadata: RecordedEvent['metadata']): RecordedEvent {
  return {
    id: '0193a000-0000-7000-8000-000000000001',
    type: 'orders.OrderSubmitted',
    streamId: 'order-1',
    revision: 0n,
    position: { commit: 7n, prepare: 7n },
    data: { order_id: '1' },
    metadata,
    created: new Date(),
  };
}

describe('event envelope', () => {
  it('builds metadata from the context with an ISO UTC millisecond timestamp', () => {
    const m = buildMetadata(context, new Date(Date.UTC(2026, 10, 22, 10, 0, 0, 5)), 2);
    expect(m).toEqual({
      account_id: 'acc-1',
      actor: 'client:c1',
      correlation_id: 'req-1',
      causation_id: null,
      occurred_at: '2026-11-22T10:00:00.005Z',
      schema_version: 2,
    });
  });

  it('turns a domain event into EventData with a UUID v7 id', () => {
    const data = toEventData({ type: 'orders.OrderSubmitted', data: { a: 1 } }, buildMetadata(context));
    expect(data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(data).toMatchObject({ type: 'orders.OrderSubmitted', data: { a: 1 }, metadata: { actor: 'client:c1' } });
  });

  it('reads a recorded event back as an envelope', () => {
    const metadata = { ...buildMetadata(context), extra: 'ignored' };
    const envelope = fromRecorded(recorded(metadata));
    expect(envelope).toEqual({
      id: '0193a000-0000-7000-8000-000000000001',
      type: 'orders.OrderSubmitted',
      data: { order_id: '1' },
      metadata: buildMetadata(context, new Date(metadata.occurred_at)),
      streamId: 'order-1',
      revision: 0n,
      position: { commit: 7n, prepare: 7n },
    });
  });

  it('refuses metadata of the wrong shape, naming every bad field', () => {
    const bad = { ...buildMetadata(context), actor: '', occurred_at: '2026-11-22T10:00:00Z', schema_version: 0 };
    expect(() => fromRecorded(recorded(bad))).toThrow(InvalidEnvelopeError);
    expect(() => fromRecorded(recorded(bad))).toThrow(/actor.*occurred_at.*schema_version/);
    expect(() => fromRecorded(recorded({}))).toThrow(/account_id/);
  });

  it('names streams <context>-<id>', () => {
    expect(streamName('order', '0193-abc')).toBe('order-0193-abc');
    expect(parseStreamName('order-0193-abc')).toEqual({ context: 'order', id: '0193-abc' });
    expect(() => streamName('or-der', '1')).toThrow(RangeError);
    expect(() => streamName('order', '')).toThrow(RangeError);
    expect(() => parseStreamName('order')).toThrow(RangeError);
  });
});

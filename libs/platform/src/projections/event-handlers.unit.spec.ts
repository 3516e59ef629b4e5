import type { DomainEvent, RecordedEnvelope } from '../events/envelope';
import { applyHandler, handledTypes, type EventHandlers } from './event-handlers';

type Opened = DomainEvent<'t.Opened', { id: string }>;
type Closed = DomainEvent<'t.Closed', { id: string; reason: string }>;

const event = (type: string, data: object) => ({ type, data, metadata: {} }) as unknown as RecordedEnvelope;

describe('event handler tables', () => {
  const seen: string[] = [];
  const handlers: EventHandlers<Opened | Closed, string[]> = {
    't.Opened': (e, log) => log.push(`opened ${e.data.id}`),
    't.Closed': (e, log) => log.push(`closed ${e.data.id}: ${e.data.reason}`),
  };

  it('handles exactly the types it has a handler for', () => {
    expect(handledTypes(handlers)).toEqual(['t.Opened', 't.Closed']);
  });

  it("runs the event's own handler and ignores a type it does not know", () => {
    applyHandler(handlers, event('t.Closed', { id: 'a', reason: 'done' }), seen);
    applyHandler(handlers, event('t.Renamed', { id: 'a' }), seen);
    expect(seen).toEqual(['closed a: done']);
  });
});

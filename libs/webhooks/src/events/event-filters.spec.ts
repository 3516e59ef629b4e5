import { eventTypeFilterProblem, parseEventTypeFilter } from './event-filters';

describe('event_type filter', () => {
  it('takes one name, a comma-separated list, repeated parameters, or both, each name once', () => {
    expect(parseEventTypeFilter('entity.created')).toEqual({ types: ['entity.created'] });
    expect(parseEventTypeFilter('entity.created,order.completed')).toEqual({
      types: ['entity.created', 'order.completed'],
    });
    expect(parseEventTypeFilter(['task.created', 'order.submitted,task.created'])).toEqual({
      types: ['task.created', 'order.submitted'],
    });
  });

  it('names unknown types, and refuses empty names and values that are not text', () => {
    expect(parseEventTypeFilter('entity.created,no.such,no.such')).toEqual({
      problem: expect.stringMatching(/^Unknown event types: no\.such \(known: entity\.created, /),
    });
    expect(eventTypeFilterProblem('entity.created,')).toBe('event_type must not have an empty name');
    expect(eventTypeFilterProblem('')).toBe('event_type must not have an empty name');
    expect(eventTypeFilterProblem([{}])).toBe('event_type must be event type names');
    expect(eventTypeFilterProblem('order.completed')).toBeNull();
  });
});

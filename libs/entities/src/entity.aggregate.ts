import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialEntityState } from './entity';
import { ENTITY_STREAM_CONTEXT } from './entity.events';

/** The entities' write side: create and update run through the platform's command runner. */
export const EntityAggregate = defineAggregate({
  streamPrefix: ENTITY_STREAM_CONTEXT,
  initialState: initialEntityState,
  evolve,
  decide,
});

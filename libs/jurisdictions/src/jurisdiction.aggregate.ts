import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialJurisdictionState } from './jurisdiction';
import { JURISDICTION_STREAM_CONTEXT } from './jurisdiction.events';

/** The jurisdictions' write side: PATCH runs through it as is; an add first checks for a duplicate (commands/add-jurisdiction.ts). */
export const JurisdictionAggregate = defineAggregate({
  streamPrefix: JURISDICTION_STREAM_CONTEXT,
  initialState: initialJurisdictionState,
  evolve,
  decide,
});

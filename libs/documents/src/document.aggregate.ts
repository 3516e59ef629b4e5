import { defineAggregate } from '@filing/platform';
import { decide, evolve, initialDocumentState } from './document';
import { DOCUMENT_STREAM_CONTEXT } from './document.events';

/** The documents' write side: PATCH runs as it is; add and delete also handle the bytes (commands/). */
export const DocumentAggregate = defineAggregate({
  streamPrefix: DOCUMENT_STREAM_CONTEXT,
  initialState: initialDocumentState,
  evolve,
  decide,
});

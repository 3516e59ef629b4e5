import type { EventData } from './event-store.port';
import { InvalidEventError } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** EventStoreDB refuses it as a bad request (and its client then crashes on the late timeout). */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Both adapters refuse the same bad input before anything is sent or written, so a bad append
 * is rejected whole, identically, whichever store is configured.
 */
export function validateAppend(streamId: string, events: readonly EventData[]): void {
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.startsWith('$')) {
    throw new InvalidEventError(`Invalid stream name ${JSON.stringify(streamId)}`);
  }
  if (events.length === 0) throw new InvalidEventError('An append needs at least one event');
  events.forEach((event, i) => {
    if (typeof event.id !== 'string' || !UUID.test(event.id) || event.id === NIL_UUID) {
      throw new InvalidEventError(`events[${i}].id must be a UUID other than the nil UUID`);
    }
    if (typeof event.type !== 'string' || event.type.length === 0 || event.type.startsWith('$')) {
      throw new InvalidEventError(`events[${i}].type must be a non-empty name not starting with $`);
    }
    if (event.data === null || typeof event.data !== 'object' || Array.isArray(event.data)) {
      throw new InvalidEventError(`events[${i}].data must be a JSON object`);
    }
    if (event.metadata !== undefined && (event.metadata === null || typeof event.metadata !== 'object')) {
      throw new InvalidEventError(`events[${i}].metadata must be a JSON object`);
    }
  });
}

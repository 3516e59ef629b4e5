import { extend } from '../domain/extend';
import type { RecordedEnvelope } from './envelope';

/**
 * Old stored shapes made current before a handler sees them (STYLE.md §1, emmett's upcasting,
 * Marten's event versioning): one table per library, keyed by the stored event type, each entry
 * a named function from the stored envelope to the current one. Handlers then know one shape
 * only; an event already current passes through unchanged (and unallocated).
 */
export type Upcasters = Readonly<Record<string, (event: RecordedEnvelope) => RecordedEnvelope>>;

/** `event` in its current shape: its type's upcaster applied, or `event` itself when it has none. */
export function upcast(upcasters: Upcasters, event: RecordedEnvelope): RecordedEnvelope {
  const upcaster = upcasters[event.type];
  return upcaster ? upcaster(event) : event;
}

/** `event` with `data` in place of its own (the metadata, position and ids kept). */
export function withData(event: RecordedEnvelope, data: RecordedEnvelope['data']): RecordedEnvelope {
  return extend(event, { data });
}

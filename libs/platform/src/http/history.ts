import type { EventStore, JsonObject } from '@filing/event-store';
import type { NotFoundError } from '../errors/domain-errors';
import { fromRecorded } from '../events/envelope';
import { type Page, type PageRequest, toPage } from './page.dto';

/** One item of `GET /{family}/{id}/history`: the customer's audit trail. */
export interface HistoryItem {
  /** The contract's event name, without the context prefix: `EntityCreated`. */
  readonly type: string;
  readonly occurred_at: string;
  /** e.g. `client:<client_id>`, `operator:<id>`. */
  readonly actor: string;
  readonly data: JsonObject;
}

export interface ReadHistoryOptions {
  readonly store: EventStore;
  readonly streamId: string;
  /** The caller's account: a stream of another account is answered as missing. */
  readonly accountId: string;
  /** Pagination with a revision key, from `pageRequest(query, collection, 'number')`. */
  readonly page: PageRequest<number>;
  readonly collection: string;
  /** The 404 to throw, e.g. `() => NotFoundError.of('entity', id)`. */
  readonly notFound: () => NotFoundError;
  /** What of the event's data the customer sees (default: all of it). */
  readonly publicData?: (type: string, data: JsonObject) => JsonObject;
}

/**
 * The resource's own stream, oldest first, paginated by revision. Read from the store, not a read
 * model, so it is complete the moment a write returns. Ownership comes from the first event's
 * metadata, which no later event can change.
 */
export async function readHistory(options: ReadHistoryOptions): Promise<Page<HistoryItem>> {
  const { store, streamId, page } = options;
  const from = page.after === null ? 0n : BigInt(page.after) + 1n;
  const [first] = page.after === null ? [] : await store.readStream(streamId, { fromRevision: 'start', maxCount: 1 });
  const events = await store.readStream(streamId, { fromRevision: from, maxCount: page.limit + 1 });
  const owner = first ?? events[0];
  if (!owner || fromRecorded(owner).metadata.account_id !== options.accountId) throw options.notFound();

  const items = events.map((event) => {
    const { metadata } = fromRecorded(event);
    const type = event.type.slice(event.type.indexOf('.') + 1);
    return {
      revision: Number(event.revision),
      item: {
        type,
        occurred_at: metadata.occurred_at,
        actor: metadata.actor,
        data: options.publicData ? options.publicData(type, event.data) : event.data,
      },
    };
  });
  const result = toPage(items, page, options.collection, (e) => e.revision);
  return { data: result.data.map((e) => e.item), next_cursor: result.next_cursor };
}

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { type EventData, SqliteEventStore } from '@filing/event-store';
import { ENTITY_CREATED, ENTITY_UPDATED } from '@filing/entities';
import { buildMetadata, toEventData } from '@filing/platform';

/**
 * Appends `count` valid domain events straight into `DATA_DIR/events.db`: entities in `accounts`
 * accounts (that many new ones, or the ones named), each created and updated in one append. For
 * benchmarks and volume tests. Returns the milliseconds it took.
 */
export async function generateEntityEvents(
  dataDir: string,
  count: number,
  accounts: number | readonly string[] = 50,
): Promise<number> {
  const store = new SqliteEventStore({ file: join(dataDir, 'events.db'), synchronous: 'normal' });
  const accountIds = typeof accounts === 'number' ? Array.from({ length: accounts }, () => uuidv7()) : accounts;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count / 2) {
        const i = next++;
        const id = uuidv7();
        const meta = buildMetadata({
          account_id: accountIds[i % accountIds.length],
          actor: 'client:generator',
          correlation_id: randomUUID(),
          causation_id: null,
        });
        const fields = {
          name: `Entity ${i}`,
          entity_type: 'llc',
          formation_jurisdiction: 'US-DE',
          formation_date: '2020-01-31',
        } as const;
        const events: EventData[] = [
          toEventData({ type: ENTITY_CREATED, data: { entity_id: id, ...fields, status: 'active' } }, meta),
          toEventData(
            { type: ENTITY_UPDATED, data: { entity_id: id, ...fields, status: 'inactive', changed: ['status'] } },
            meta,
          ),
        ];
        await store.appendToStream(`entity-${id}`, events);
      }
    }),
  );
  const ms = performance.now() - started;
  await store.close();
  return ms;
}

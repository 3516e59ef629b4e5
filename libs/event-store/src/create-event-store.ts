import { join } from 'node:path';
import type { EventStore } from './event-store.port';
import { EsdbEventStore } from './esdb';
import { SqliteEventStore } from './sqlite/sqlite-event-store';

export type EventStoreConfig =
  | {
      readonly kind: 'sqlite';
      readonly dataDir: string;
      /** How often live subscriptions look for other processes' appends (default 250 ms; tests). */
      readonly pollIntervalMs?: number;
    }
  | { readonly kind: 'esdb'; readonly connectionString: string };

/** The adapter the configuration names: `sqlite` keeps its log in `DATA_DIR/events.db`. */
export function createEventStore(config: EventStoreConfig): EventStore {
  return config.kind === 'esdb'
    ? new EsdbEventStore(config.connectionString)
    : new SqliteEventStore({ file: join(config.dataDir, 'events.db'), pollIntervalMs: config.pollIntervalMs });
}

import { type DynamicModule, Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createEventStore, type EventStoreConfig } from './create-event-store';
import { EVENT_STORE, type EventStore } from './event-store.port';
import { ObservedEventStore } from './observed-event-store';
import { SqliteEventStore } from './sqlite/sqlite-event-store';

@Injectable()
class EventStoreCloser implements OnApplicationShutdown {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  // onApplicationShutdown runs after every beforeApplicationShutdown hook, so subscribers
  // (projections, webhooks) stop first and the store closes last.
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/**
 * Provides the configured `EventStore` under the `EVENT_STORE` token to every module, as an
 * `ObservedEventStore` so metrics can count appends.
 */
@Global()
@Module({})
export class EventStoreModule {
  static forRoot(config: EventStoreConfig): DynamicModule {
    return {
      module: EventStoreModule,
      global: true,
      providers: [
        {
          provide: EVENT_STORE,
          useFactory: async () => {
            const store = createEventStore(config);
            // The app serves only once the sqlite writer thread is up (a broken one fails the start).
            if (store instanceof SqliteEventStore) await store.ready();
            return new ObservedEventStore(store);
          },
        },
        EventStoreCloser,
      ],
      exports: [EVENT_STORE],
    };
  }
}

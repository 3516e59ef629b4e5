export * from './event-store.port';
export * from './errors';
export * from './position';
export { validateAppend } from './validate-events';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';
export { createEventStore, type EventStoreConfig } from './create-event-store';
export { EventStoreModule } from './event-store.module';
export { ObservedEventStore, type AppendObserver } from './observed-event-store';
export { connectionStringProblem } from './esdb/connection-string';

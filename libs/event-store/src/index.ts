export * from './event-store.port';
export * from './errors';
export * from './position';
export { validateAppend } from './validate-events';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';

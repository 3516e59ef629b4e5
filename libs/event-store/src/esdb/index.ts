export { EsdbEventStore, type EsdbEventStoreOptions } from './esdb-event-store';
export { verifyEventStoreAccess } from './esdb-access';

import type { DomainEvent } from '@filing/platform';

/**
 * The entities context's public contract: what other modules (webhooks, orders) may depend on.
 * Names are explicit and stable; data is plain JSON. A change of meaning is a new schema version
 * (the aggregate's `schemaVersions`; all are 1 so far), and readers keep understanding the old ones.
 */
export const ENTITY_CREATED = 'entities.EntityCreated';
export const ENTITY_UPDATED = 'entities.EntityUpdated';

export const ENTITY_TYPES = ['llc', 'corporation', 'nonprofit', 'partnership', 'sole_proprietorship', 'other'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export const ENTITY_STATUSES = ['active', 'inactive', 'dissolved'] as const;
export type EntityStatus = (typeof ENTITY_STATUSES)[number];

/** The fields a customer sees and (some of them) changes. A type, not an interface: it must be JSON. */
export type EntityFields = {
  readonly name: string;
  readonly entity_type: EntityType;
  readonly status: EntityStatus;
  /** ISO 3166-2, e.g. `US-DE`. */
  readonly formation_jurisdiction: string | null;
  /** `YYYY-MM-DD`. */
  readonly formation_date: string | null;
};

/** The fields every entity event carries, as they are after the event. */
export const ENTITY_FIELDS: readonly (keyof EntityFields)[] = [
  'name',
  'entity_type',
  'status',
  'formation_jurisdiction',
  'formation_date',
];

export type EntityCreatedData = EntityFields & { readonly entity_id: string };

/**
 * The entity as it is after the update (so a consumer needs no earlier event to know its
 * status), and the names of the fields this update changed.
 */
export type EntityUpdatedData = EntityFields & {
  readonly entity_id: string;
  readonly changed: (keyof EntityFields)[];
};

export type EntityCreated = DomainEvent<typeof ENTITY_CREATED, EntityCreatedData>;
export type EntityUpdated = DomainEvent<typeof ENTITY_UPDATED, EntityUpdatedData>;
export type EntityEvent = EntityCreated | EntityUpdated;

/** Streams are `entity-<id>`. */
export const ENTITY_STREAM_CONTEXT = 'entity';

import type { DomainEvent } from '@filing/platform';

/**
 * The jurisdictions context's public contract: what other modules (webhooks) may depend on.
 * Names are explicit and stable; data is plain JSON and carries the registration as it is after
 * the event (jurisdiction_id, entity_id, status…), so a consumer needs no earlier event. A change
 * of meaning is a new schema version (the aggregate's `schemaVersions`; all are 1 so far).
 */
export const JURISDICTION_ADDED = 'jurisdictions.JurisdictionAdded';
export const JURISDICTION_UPDATED = 'jurisdictions.JurisdictionUpdated';

export const REGISTRATION_TYPES = ['domestic', 'foreign'] as const;
export type RegistrationType = (typeof REGISTRATION_TYPES)[number];

export const JURISDICTION_STATUSES = ['pending', 'active', 'inactive'] as const;
export type JurisdictionStatus = (typeof JURISDICTION_STATUSES)[number];

/** An entity's registration in one jurisdiction. A type, not an interface: it must be JSON. */
export type JurisdictionFields = {
  /** The entity registered; never changes. */
  readonly entity_id: string;
  /** ISO 3166-2, e.g. `US-DE`; never changes. */
  readonly code: string;
  readonly registration_type: RegistrationType;
  readonly status: JurisdictionStatus;
};

/** The fields every jurisdiction event carries, as they are after the event. */
export const JURISDICTION_FIELDS: readonly (keyof JurisdictionFields)[] = [
  'entity_id',
  'code',
  'registration_type',
  'status',
];

export type JurisdictionAddedData = JurisdictionFields & { readonly jurisdiction_id: string };

/** The registration after the update, and the names of the fields this update changed. */
export type JurisdictionUpdatedData = JurisdictionFields & {
  readonly jurisdiction_id: string;
  readonly changed: ('registration_type' | 'status')[];
};

export type JurisdictionAdded = DomainEvent<typeof JURISDICTION_ADDED, JurisdictionAddedData>;
export type JurisdictionUpdated = DomainEvent<typeof JURISDICTION_UPDATED, JurisdictionUpdatedData>;
export type JurisdictionEvent = JurisdictionAdded | JurisdictionUpdated;

/** Streams are `jurisdiction-<id>`. */
export const JURISDICTION_STREAM_CONTEXT = 'jurisdiction';

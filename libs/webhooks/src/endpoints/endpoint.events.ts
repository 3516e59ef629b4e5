import type { DomainEvent } from '@filing/platform';

/** The endpoint stream's event type names (stored: never renamed). */
export const EndpointEvents = {
  EndpointCreated: 'webhooks.EndpointCreated',
  EndpointUpdated: 'webhooks.EndpointUpdated',
  EndpointEnabled: 'webhooks.EndpointEnabled',
  EndpointDisabled: 'webhooks.EndpointDisabled',
  EndpointDeleted: 'webhooks.EndpointDeleted',
  EndpointSecretRotated: 'webhooks.EndpointSecretRotated',
  EndpointSecretSealed: 'webhooks.EndpointSecretSealed',
  EndpointFailing: 'webhooks.EndpointFailing',
} as const;
/** What every endpoint event type starts with (a projection's or subscription's filter). */
export const ENDPOINT_EVENT_PREFIX = 'webhooks.Endpoint';
/** The account switch's one event type name. */
export const NOTIFICATIONS_SWITCHED = 'webhooks.NotificationsSwitched';

/**
 * The endpoint stream's contract (`webhookendpoint-<id>`). No event carries a signing secret in
 * plaintext: only its generation, a fingerprint, and the secret sealed with the platform's
 * SecretBox (AES-256-GCM under SECRETS_KEY, bound to `webhook-endpoint:<id>`; the sealed form names
 * its key). Schema 1 events (before the secrets moved into the stream) have no `secret_sealed`:
 * an `EndpointSecretSealed` imported from the old `webhook-secrets.db` supplies it.
 */
export type EndpointCreated = DomainEvent<
  typeof EndpointEvents.EndpointCreated,
  {
    endpoint_id: string;
    url: string;
    description: string | null;
    event_types: string[];
    secret_generation: number;
    secret_fingerprint: string;
    /** Schema 2 on. */
    secret_sealed?: string;
    /** Sends per second at most; null (or absent, before throttling existed): no limit. */
    rate_limit_per_second?: number | null;
  }
>;
/** Only the fields that changed, with their new values. */
export type EndpointUpdated = DomainEvent<
  typeof EndpointEvents.EndpointUpdated,
  {
    endpoint_id: string;
    url?: string;
    description?: string | null;
    event_types?: string[];
    rate_limit_per_second?: number | null;
  }
>;
export type EndpointEnabled = DomainEvent<typeof EndpointEvents.EndpointEnabled, { endpoint_id: string }>;

/**
 * Why an endpoint is disabled (CONTRACT.md §4 `disabled_reason`): `manual`, by a user (a new
 * endpoint, too, until a user enables it); `gone`, the receiver answered 410; `failing`, every
 * attempt failed for WEBHOOK_DISABLE_AFTER (CONTRACT.md §5).
 */
export const DISABLED_REASONS = ['manual', 'gone', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/**
 * Schema 2 carries `reason`; schema 1 had none. Read any disable through `disabledReasonOf`.
 * A `failing` disable carries its evidence: the first and the last of the failed attempts (none
 * succeeded between them, nor since the endpoint was last enabled) that span WEBHOOK_DISABLE_AFTER.
 */
export type EndpointDisabled = DomainEvent<
  typeof EndpointEvents.EndpointDisabled,
  { endpoint_id: string; reason: DisabledReason; failing_since?: string; last_failure_at?: string }
>;

/** The upcast of schema 1: every disable before reasons existed was a user's. */
export function disabledReasonOf(data: { readonly reason?: unknown }): DisabledReason {
  return (DISABLED_REASONS as readonly unknown[]).includes(data.reason) ? (data.reason as DisabledReason) : 'manual';
}
export type EndpointDeleted = DomainEvent<typeof EndpointEvents.EndpointDeleted, { endpoint_id: string }>;
export type EndpointSecretRotated = DomainEvent<
  typeof EndpointEvents.EndpointSecretRotated,
  {
    endpoint_id: string;
    secret_generation: number;
    secret_fingerprint: string;
    /** Schema 2 on. */
    secret_sealed?: string;
    /** The previous secret keeps signing until then (24 h). */
    previous_generation: number;
    previous_fingerprint: string;
    previous_expires_at: string;
  }
>;

/**
 * The secret with this fingerprint (the current or the previous one), sealed anew: imported from
 * a `webhook-secrets.db` of an older version, or re-sealed under a new SECRETS_KEY after a rotation.
 */
export type EndpointSecretSealed = DomainEvent<
  typeof EndpointEvents.EndpointSecretSealed,
  { endpoint_id: string; secret_fingerprint: string; secret_sealed: string }
>;

/**
 * A signing secret of the endpoint, sealed, in the endpoint's key stream (`webhookendpointkey-<id>`,
 * secrets/secret-keys.ts), never in its own stream: written after the EndpointCreated or
 * EndpointSecretRotated that names its fingerprint, again (re-sealed) after a SECRETS_KEY
 * rotation, and gone with the key stream when the endpoint is deleted. Not an event of the
 * endpoint's stream (the aggregate never sees it); the endpoints read model takes the sealed
 * secret from it.
 */
export const ENDPOINT_SECRET_STORED = 'webhooks.EndpointSecretStored';
export type EndpointSecretStored = DomainEvent<
  typeof ENDPOINT_SECRET_STORED,
  { endpoint_id: string; secret_fingerprint: string; secret_sealed: string }
>;

/**
 * Every attempt of the endpoint has failed for WEBHOOK_FAILING_AFTER (issue 50): recorded once per
 * failing streak (the streak is its first failed attempt, `failing_since`), with its evidence.
 * The operational `webhook_endpoint.failing` is mapped from it.
 */
export type EndpointFailing = DomainEvent<
  typeof EndpointEvents.EndpointFailing,
  { endpoint_id: string; failing_since: string; last_failure_at: string }
>;

export type EndpointEvent =
  | EndpointFailing
  | EndpointCreated
  | EndpointUpdated
  | EndpointEnabled
  | EndpointDisabled
  | EndpointDeleted
  | EndpointSecretRotated
  | EndpointSecretSealed;

/** The account switch *Webhook Notifications* (`webhooksettings-<account id>`). */
export type NotificationsSwitched = DomainEvent<
  typeof NOTIFICATIONS_SWITCHED,
  { account_id: string; enabled: boolean }
>;

/** schema_version of the endpoint events written now (default 1). */
export const ENDPOINT_EVENT_SCHEMA_VERSIONS: Readonly<Partial<Record<EndpointEvent['type'], number>>> = {
  [EndpointEvents.EndpointDisabled]: 2,
  [EndpointEvents.EndpointCreated]: 2,
  [EndpointEvents.EndpointSecretRotated]: 2,
};

/** What a sealed signing secret is bound to: it cannot be moved to another endpoint's event. */
export function secretContext(endpointId: string): string {
  return `webhook-endpoint:${endpointId}`;
}

export const ENDPOINT_STREAM = 'webhookendpoint';
export const SETTINGS_STREAM = 'webhooksettings';

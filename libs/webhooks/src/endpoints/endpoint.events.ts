import type { DomainEvent } from '@filing/platform';

/**
 * The endpoint stream's contract (`webhookendpoint-<id>`). No event carries a signing secret:
 * only its generation and a fingerprint; the secret itself is in the secrets file.
 */
export type EndpointCreated = DomainEvent<
  'webhooks.EndpointCreated',
  {
    endpoint_id: string;
    url: string;
    description: string | null;
    event_types: string[];
    secret_generation: number;
    secret_fingerprint: string;
  }
>;
/** Only the fields that changed, with their new values. */
export type EndpointUpdated = DomainEvent<
  'webhooks.EndpointUpdated',
  { endpoint_id: string; url?: string; description?: string | null; event_types?: string[] }
>;
export type EndpointEnabled = DomainEvent<'webhooks.EndpointEnabled', { endpoint_id: string }>;
export type EndpointDisabled = DomainEvent<'webhooks.EndpointDisabled', { endpoint_id: string }>;
export type EndpointDeleted = DomainEvent<'webhooks.EndpointDeleted', { endpoint_id: string }>;
export type EndpointSecretRotated = DomainEvent<
  'webhooks.EndpointSecretRotated',
  {
    endpoint_id: string;
    secret_generation: number;
    secret_fingerprint: string;
    /** The previous secret keeps signing until then (24 h). */
    previous_generation: number;
    previous_fingerprint: string;
    previous_expires_at: string;
  }
>;

export type EndpointEvent =
  | EndpointCreated
  | EndpointUpdated
  | EndpointEnabled
  | EndpointDisabled
  | EndpointDeleted
  | EndpointSecretRotated;

/** The account switch *Webhook Notifications* (`webhooksettings-<account id>`). */
export type NotificationsSwitched = DomainEvent<'webhooks.NotificationsSwitched', { account_id: string; enabled: boolean }>;

export const ENDPOINT_STREAM = 'webhookendpoint';
export const SETTINGS_STREAM = 'webhooksettings';

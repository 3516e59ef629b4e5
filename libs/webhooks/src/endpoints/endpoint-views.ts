import type { DisabledReason } from './endpoint.events';
import { extend } from '@filing/platform';

/** The endpoint as the API shows it (CONTRACT.md §4). */
export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly event_types: string[];
  readonly enabled: boolean;
  /** null while enabled. */
  readonly disabled_reason: DisabledReason | null;
  /** Sends per second at most; null: no limit. */
  readonly rate_limit_per_second: number | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  event_types: string;
  enabled: number;
  /** When it was last enabled; null if never. */
  enabled_at: string | null;
  rate_limit_per_second: number | null;
  /** Both null while enabled. */
  disabled_reason: DisabledReason | null;
  disabled_at: string | null;
  deleted: number;
  secret_generation: number;
  secret_fingerprint: string;
  /** The signing secret sealed with the SecretBox; null: an older version's, not imported. */
  secret_sealed: string | null;
  previous_generation: number | null;
  previous_fingerprint: string | null;
  previous_sealed: string | null;
  previous_expires_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  rowid_seq?: number;
}

export function endpointView(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: JSON.parse(row.event_types) as string[],
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason,
    rate_limit_per_second: row.rate_limit_per_second,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}

/** What the settings screen shows beyond the API's view: since when the endpoint is disabled. */
export interface EndpointDetails extends EndpointView {
  readonly disabled_at: string | null;
}

export function endpointDetails(row: EndpointRow): EndpointDetails {
  return extend(endpointView(row), { disabled_at: row.disabled_at });
}

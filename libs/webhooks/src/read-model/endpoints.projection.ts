import { RegisterProjection, type Projection, type RecordedEnvelope } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import {
  disabledReasonOf,
  ENDPOINT_EVENT_PREFIX,
  ENDPOINT_SECRET_STORED,
  type EndpointEvent,
  type EndpointSecretStored,
  EndpointEvents,
  NOTIFICATIONS_SWITCHED,
  type NotificationsSwitched,
} from '../endpoints/endpoint.events';
import { cachedStatement as stmt } from '@filing/platform';
import { forgetCachedEndpoints } from './endpoints-cache';

/** `webhook_endpoints` and `webhook_settings`: the API's reads and the dispatcher's current view. */
@Injectable()
@RegisterProjection()
export class EndpointsProjection implements Projection {
  readonly name = 'webhooks.endpoints';
  readonly serves = ['/external-api/v1/webhook-endpoints', '/external-api/v1/webhook-settings', '/settings/profile'];
  // 3: disabled_reason and disabled_at (why and since when it is disabled).
  // 4: secret_sealed and previous_sealed (the signing secrets, sealed, from the stream).
  // 5: rate_limit_per_second; enabled_at (when a failing streak may begin at the earliest).
  // 6: the sealed secrets from the endpoints' key streams (EndpointSecretStored).
  readonly version = 6;
  readonly tables = ['webhook_endpoints', 'webhook_settings'];
  readonly handles = [ENDPOINT_EVENT_PREFIX, NOTIFICATIONS_SWITCHED];

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS webhook_endpoints (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, url TEXT NOT NULL, description TEXT, event_types TEXT NOT NULL,
      enabled INTEGER NOT NULL, enabled_at TEXT, disabled_reason TEXT, disabled_at TEXT, deleted INTEGER NOT NULL, rate_limit_per_second INTEGER, secret_generation INTEGER NOT NULL, secret_fingerprint TEXT NOT NULL,
      secret_sealed TEXT, previous_generation INTEGER, previous_fingerprint TEXT, previous_sealed TEXT, previous_expires_at TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS webhook_endpoints_account ON webhook_endpoints (account_id, deleted, id);
    CREATE TABLE IF NOT EXISTS webhook_settings (
      account_id TEXT PRIMARY KEY, notifications_enabled INTEGER NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL)`);
  }

  apply(db: Database.Database, envelope: RecordedEnvelope): void {
    const event = envelope as RecordedEnvelope<EndpointEvent | NotificationsSwitched | EndpointSecretStored>;
    // The dispatcher's copies of these rows are read again from the next attempt on.
    forgetCachedEndpoints(db);
    const at = event.metadata.occurred_at;
    const version = Number(event.revision);
    if (event.type === NOTIFICATIONS_SWITCHED) {
      stmt(
        db,
        `INSERT INTO webhook_settings (account_id, notifications_enabled, updated_at, version) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET notifications_enabled = excluded.notifications_enabled,
           updated_at = excluded.updated_at, version = excluded.version`,
      ).run(event.data.account_id, event.data.enabled ? 1 : 0, at, version);
      return;
    }
    if (event.type === ENDPOINT_SECRET_STORED) {
      // From the endpoint's key stream: the sealed secret only, not a change of the endpoint (no version).
      stmt(
        db,
        `UPDATE webhook_endpoints SET secret_sealed = CASE WHEN secret_fingerprint = ? THEN ? ELSE secret_sealed END,
           previous_sealed = CASE WHEN previous_fingerprint = ? THEN ? ELSE previous_sealed END WHERE id = ?`,
      ).run(
        event.data.secret_fingerprint,
        event.data.secret_sealed,
        event.data.secret_fingerprint,
        event.data.secret_sealed,
        event.data.endpoint_id,
      );
      return;
    }
    const id = event.data.endpoint_id;
    const touch = (sets: string, ...params: unknown[]) =>
      stmt(db, `UPDATE webhook_endpoints SET ${sets}${sets ? ', ' : ''}updated_at = ?, version = ? WHERE id = ?`).run(
        ...params,
        at,
        version,
        id,
      );
    switch (event.type) {
      case EndpointEvents.EndpointCreated:
        stmt(
          db,
          `INSERT INTO webhook_endpoints (id, account_id, url, description, event_types, enabled, disabled_reason, disabled_at, deleted,
             rate_limit_per_second, secret_generation, secret_fingerprint, secret_sealed, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, 0, 'manual', ?, 0, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        ).run(
          id,
          event.metadata.account_id,
          event.data.url,
          event.data.description,
          JSON.stringify(event.data.event_types),
          at,
          event.data.rate_limit_per_second ?? null,
          event.data.secret_generation,
          event.data.secret_fingerprint,
          event.data.secret_sealed ?? null,
          at,
          at,
          version,
        );
        return;
      case EndpointEvents.EndpointUpdated: {
        const d = event.data;
        touch(
          `url = coalesce(?, url), description = CASE WHEN ? THEN ? ELSE description END, event_types = coalesce(?, event_types),
           rate_limit_per_second = CASE WHEN ? THEN ? ELSE rate_limit_per_second END`,
          d.url ?? null,
          d.description !== undefined ? 1 : 0,
          d.description ?? null,
          d.event_types ? JSON.stringify(d.event_types) : null,
          d.rate_limit_per_second !== undefined ? 1 : 0,
          d.rate_limit_per_second ?? null,
        );
        return;
      }
      case EndpointEvents.EndpointEnabled:
        touch('enabled = 1, enabled_at = ?, disabled_reason = NULL, disabled_at = NULL', at);
        return;
      case EndpointEvents.EndpointDisabled:
        touch('enabled = 0, disabled_reason = ?, disabled_at = ?', disabledReasonOf(event.data), at);
        return;
      case EndpointEvents.EndpointDeleted:
        // Its secrets go with it (the key stream is destroyed): a rebuild never sees them either.
        touch('enabled = 0, deleted = 1, secret_sealed = NULL, previous_sealed = NULL');
        return;
      case EndpointEvents.EndpointFailing:
        // Only its version moves: GET's `version` stays the stream revision (the notification's resource_version).
        touch('');
        return;
      case EndpointEvents.EndpointSecretRotated:
        // The current sealed secret becomes the previous one (SQLite reads every right-hand side from the old row).
        touch(
          `secret_generation = ?, secret_fingerprint = ?, secret_sealed = ?, previous_generation = ?, previous_fingerprint = ?,
           previous_sealed = CASE WHEN secret_fingerprint = ? THEN secret_sealed END, previous_expires_at = ?`,
          event.data.secret_generation,
          event.data.secret_fingerprint,
          event.data.secret_sealed ?? null,
          event.data.previous_generation,
          event.data.previous_fingerprint,
          event.data.previous_fingerprint,
          event.data.previous_expires_at,
        );
        return;
      case EndpointEvents.EndpointSecretSealed:
        touch(
          `secret_sealed = CASE WHEN secret_fingerprint = ? THEN ? ELSE secret_sealed END,
           previous_sealed = CASE WHEN previous_fingerprint = ? THEN ? ELSE previous_sealed END`,
          event.data.secret_fingerprint,
          event.data.secret_sealed,
          event.data.secret_fingerprint,
          event.data.secret_sealed,
        );
        return;
    }
  }
}

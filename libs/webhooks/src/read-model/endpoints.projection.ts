import {
  applyHandler,
  cachedStatement as stmt,
  handledTypes,
  RegisterProjection,
  upcast,
  type EventHandlers,
  type Projection,
  type RecordedEnvelope,
} from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import {
  ENDPOINT_SECRET_STORED,
  type EndpointEvent,
  type EndpointSecretStored,
  EndpointEvents,
  NOTIFICATIONS_SWITCHED,
  type NotificationsSwitched,
} from '../endpoints/endpoint.events';
import { forgetCachedEndpoints } from './endpoints-cache';
import { WEBHOOK_UPCASTERS } from './upcasters';

/** An endpoint event's UPDATE of its row: `sets`, then `updated_at` and `version` (the event's own). */
function touch(
  db: Database.Database,
  event: RecordedEnvelope<EndpointEvent>,
  sets: string,
  ...params: unknown[]
): void {
  stmt(db, `UPDATE webhook_endpoints SET ${sets}${sets ? ', ' : ''}updated_at = ?, version = ? WHERE id = ?`).run(
    ...params,
    event.metadata.occurred_at,
    Number(event.revision),
    event.data.endpoint_id,
  );
}

/** Both SET clauses of a sealed secret: it fills the current or the previous secret, whichever has its fingerprint. */
const SEALED = `secret_sealed = CASE WHEN secret_fingerprint = ? THEN ? ELSE secret_sealed END,
           previous_sealed = CASE WHEN previous_fingerprint = ? THEN ? ELSE previous_sealed END`;

const endpoints: EventHandlers<EndpointEvent | NotificationsSwitched | EndpointSecretStored, Database.Database> = {
  [NOTIFICATIONS_SWITCHED]: (e, db) => {
    stmt(
      db,
      `INSERT INTO webhook_settings (account_id, notifications_enabled, updated_at, version) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET notifications_enabled = excluded.notifications_enabled,
           updated_at = excluded.updated_at, version = excluded.version`,
    ).run(e.data.account_id, e.data.enabled ? 1 : 0, e.metadata.occurred_at, Number(e.revision));
  },
  // From the endpoint's key stream: the sealed secret only, not a change of the endpoint (no version).
  [ENDPOINT_SECRET_STORED]: ({ data: d }, db) => {
    stmt(db, `UPDATE webhook_endpoints SET ${SEALED} WHERE id = ?`).run(
      d.secret_fingerprint,
      d.secret_sealed,
      d.secret_fingerprint,
      d.secret_sealed,
      d.endpoint_id,
    );
  },
  [EndpointEvents.EndpointCreated]: (e, db) => {
    const at = e.metadata.occurred_at;
    stmt(
      db,
      `INSERT INTO webhook_endpoints (id, account_id, url, description, event_types, enabled, disabled_reason, disabled_at, deleted,
             rate_limit_per_second, secret_generation, secret_fingerprint, secret_sealed, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, 0, 'manual', ?, 0, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ).run(
      e.data.endpoint_id,
      e.metadata.account_id,
      e.data.url,
      e.data.description,
      JSON.stringify(e.data.event_types),
      at,
      e.data.rate_limit_per_second ?? null,
      e.data.secret_generation,
      e.data.secret_fingerprint,
      e.data.secret_sealed ?? null,
      at,
      at,
      Number(e.revision),
    );
  },
  [EndpointEvents.EndpointUpdated]: (e, db) => {
    const d = e.data;
    touch(
      db,
      e,
      `url = coalesce(?, url), description = CASE WHEN ? THEN ? ELSE description END, event_types = coalesce(?, event_types),
           rate_limit_per_second = CASE WHEN ? THEN ? ELSE rate_limit_per_second END`,
      d.url ?? null,
      d.description !== undefined ? 1 : 0,
      d.description ?? null,
      d.event_types ? JSON.stringify(d.event_types) : null,
      d.rate_limit_per_second !== undefined ? 1 : 0,
      d.rate_limit_per_second ?? null,
    );
  },
  [EndpointEvents.EndpointEnabled]: (e, db) =>
    touch(db, e, 'enabled = 1, enabled_at = ?, disabled_reason = NULL, disabled_at = NULL', e.metadata.occurred_at),
  [EndpointEvents.EndpointDisabled]: (e, db) =>
    touch(db, e, 'enabled = 0, disabled_reason = ?, disabled_at = ?', e.data.reason, e.metadata.occurred_at),
  // Its secrets go with it (the key stream is destroyed): a rebuild never sees them either.
  [EndpointEvents.EndpointDeleted]: (e, db) =>
    touch(db, e, 'enabled = 0, deleted = 1, secret_sealed = NULL, previous_sealed = NULL'),
  // Only its version moves: GET's `version` stays the stream revision (the notification's resource_version).
  [EndpointEvents.EndpointFailing]: (e, db) => touch(db, e, ''),
  // The current sealed secret becomes the previous one (SQLite reads every right-hand side from the old row).
  [EndpointEvents.EndpointSecretRotated]: (e, db) => {
    const d = e.data;
    touch(
      db,
      e,
      `secret_generation = ?, secret_fingerprint = ?, secret_sealed = ?, previous_generation = ?, previous_fingerprint = ?,
           previous_sealed = CASE WHEN secret_fingerprint = ? THEN secret_sealed END, previous_expires_at = ?`,
      d.secret_generation,
      d.secret_fingerprint,
      d.secret_sealed ?? null,
      d.previous_generation,
      d.previous_fingerprint,
      d.previous_fingerprint,
      d.previous_expires_at,
    );
  },
  [EndpointEvents.EndpointSecretSealed]: (e, db) => {
    const d = e.data;
    touch(db, e, SEALED, d.secret_fingerprint, d.secret_sealed, d.secret_fingerprint, d.secret_sealed);
  },
};

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
  readonly handles = handledTypes(endpoints);

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
    // The dispatcher's copies of these rows are read again from the next attempt on.
    forgetCachedEndpoints(db);
    applyHandler(endpoints, upcast(WEBHOOK_UPCASTERS, envelope), db);
  }
}

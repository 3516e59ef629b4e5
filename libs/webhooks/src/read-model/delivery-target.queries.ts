import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { DeliveryTarget } from '../deliveries/delivery';
import { cachedTarget } from './endpoints-cache';

interface TargetRow {
  id: string;
  account_id: string;
  url: string;
  enabled: number;
  deleted: number;
  secret_sealed: string | null;
  previous_sealed: string | null;
  previous_expires_at: string | null;
  notifications_enabled: number | null;
}

/** The endpoint and its account's switch as the read models hold them now, in one read. */
function deliveryTargetOf(row: TargetRow, now: Date): DeliveryTarget {
  const previousSigns = row.previous_expires_at !== null && Date.parse(row.previous_expires_at) > now.getTime();
  const signing = previousSigns ? [row.secret_sealed, row.previous_sealed] : [row.secret_sealed];
  return {
    endpointId: row.id,
    accountId: row.account_id,
    url: row.url,
    endpoint: row.deleted === 1 ? 'deleted' : row.enabled === 1 ? 'enabled' : 'disabled',
    notificationsEnabled: row.notifications_enabled === 1,
    signingSecrets: signing.filter((s): s is string => s !== null),
  };
}

/**
 * Where a delivery would go now (`DeliveryTarget`): endpoint state, the account switch and the
 * signing secrets in use (sealed), by one query, kept until the endpoints projection applies an
 * event (endpoints-cache.ts). The dispatcher reads it before every attempt and a redelivery before
 * it is accepted, so both apply the same rule (`unsendable`) to the same facts.
 */
@Injectable()
export class DeliveryTargets {
  constructor(private readonly runner: ProjectionRunner) {}

  /** null when the account has no such endpoint (never made, or another account's). */
  of(accountId: string, endpointId: string, now: Date = new Date()): DeliveryTarget | null {
    const db = this.runner.db;
    const row = cachedTarget(db, `${accountId} ${endpointId}`, () => this.read(db, accountId, endpointId));
    return row ? deliveryTargetOf(row, now) : null;
  }

  private read(db: Database.Database, accountId: string, endpointId: string): TargetRow | undefined {
    return stmt(
      db,
      `SELECT e.id, e.account_id, e.url, e.enabled, e.deleted, e.secret_sealed, e.previous_sealed, e.previous_expires_at,
         s.notifications_enabled
       FROM webhook_endpoints e LEFT JOIN webhook_settings s ON s.account_id = e.account_id
       WHERE e.id = ? AND e.account_id = ?`,
    ).get(endpointId, accountId) as TargetRow | undefined;
  }
}

import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { DeliveryTarget } from '../deliveries/delivery';

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
 * signing secrets in use (sealed), by one query. The dispatcher reads it before every attempt and a
 * redelivery before it is accepted, so both apply the same rule (`unsendable`) to the same facts.
 */
@Injectable()
export class DeliveryTargets {
  /** Rows read during `inOneRound`, by account and endpoint; null outside one. */
  private round: Map<string, TargetRow | undefined> | null = null;

  constructor(private readonly runner: ProjectionRunner) {}

  /** null when the account has no such endpoint (never made, or another account's). */
  of(accountId: string, endpointId: string, now: Date = new Date()): DeliveryTarget | null {
    const key = `${accountId} ${endpointId}`;
    const row = this.round?.has(key) ? this.round.get(key) : this.read(accountId, endpointId);
    this.round?.set(key, row);
    return row ? deliveryTargetOf(row, now) : null;
  }

  /**
   * Runs `work` (synchronous: one dispatcher round starting its attempts) reading each endpoint's
   * row once: nothing can write the read model before it returns, so every read would be the same.
   */
  inOneRound<T>(work: () => T): T {
    this.round = new Map();
    try {
      return work();
    } finally {
      this.round = null;
    }
  }

  private read(accountId: string, endpointId: string): TargetRow | undefined {
    return stmt(
      this.runner.db,
      `SELECT e.id, e.account_id, e.url, e.enabled, e.deleted, e.secret_sealed, e.previous_sealed, e.previous_expires_at,
         s.notifications_enabled
       FROM webhook_endpoints e LEFT JOIN webhook_settings s ON s.account_id = e.account_id
       WHERE e.id = ? AND e.account_id = ?`,
    ).get(endpointId, accountId) as TargetRow | undefined;
  }
}

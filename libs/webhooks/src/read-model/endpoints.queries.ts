import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type { EndpointRow } from '../endpoints/endpoint-views';

export type SealedSecretsRow = Pick<
  EndpointRow,
  'id' | 'secret_fingerprint' | 'secret_sealed' | 'previous_fingerprint' | 'previous_sealed' | 'previous_expires_at'
>;

/** `webhook_endpoints` and `webhook_settings`, account-scoped: what the API and the settings screen read. */
@Injectable()
export class EndpointsQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  /** The account's endpoint, unless deleted. */
  endpoint(accountId: string, id: string): EndpointRow | undefined {
    return stmt(this.runner.db, 'SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted = 0').get(
      id,
      accountId,
    ) as EndpointRow | undefined;
  }

  /** How many endpoints the account has (disabled ones count, deleted ones do not). */
  countOf(accountId: string): number {
    const row = stmt(
      this.runner.db,
      'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = ? AND deleted = 0',
    ).get(accountId) as { n: number };
    return row.n;
  }

  /** The account's endpoints after `afterSeq` (creation order), `limit` of them. */
  page(accountId: string, afterSeq: number, limit: number): EndpointRow[] {
    return stmt(
      this.runner.db,
      'SELECT rowid AS rowid_seq, * FROM webhook_endpoints WHERE account_id = ? AND deleted = 0 AND rowid > ? ORDER BY rowid LIMIT ?',
    ).all(accountId, afterSeq, limit) as EndpointRow[];
  }

  /** Every endpoint's sealed signing secrets (not deleted ones'): what a re-seal under a new key goes through. */
  sealedSecrets(): IterableIterator<SealedSecretsRow> {
    return stmt(
      this.runner.db,
      `SELECT id, secret_fingerprint, secret_sealed, previous_fingerprint, previous_sealed, previous_expires_at
       FROM webhook_endpoints WHERE deleted = 0 AND (secret_sealed IS NOT NULL OR previous_sealed IS NOT NULL)`,
    ).iterate() as IterableIterator<SealedSecretsRow>;
  }

  /** The account switch *Webhook Notifications*; off until the account turns it on. */
  notificationsEnabled(accountId: string): boolean {
    const row = stmt(this.runner.db, 'SELECT notifications_enabled FROM webhook_settings WHERE account_id = ?').get(
      accountId,
    ) as { notifications_enabled: number } | undefined;
    return row?.notifications_enabled === 1;
  }
}

import { APP_CONFIG, type AppConfig, NotFoundError } from '@filing/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SecretKeys } from './secret-keys';

/** Where versions before the secrets moved into the event store kept them, in plaintext. */
export const LEGACY_SECRETS_FILE = 'webhook-secrets.db';

/**
 * The signing secrets' two start-up chores, both writes to the endpoints' key streams
 * (secret-keys.ts), each guarded by what the stream holds:
 * - **Import** from `DATA_DIR/webhook-secrets.db` (older versions kept the secrets there and put
 *   only fingerprints in events): each secret is sealed into its endpoint's key stream, then the
 *   plaintext file is deleted. A failure leaves the file for the next start.
 * - **Re-seal** under the current SECRETS_KEY every live secret still sealed under a previous one
 *   (SECRETS_KEY_PREVIOUS), truncating the older versions, and move the secrets of endpoints made
 *   before key streams into theirs; `filing secrets:reseal` does the same on demand.
 */
@Injectable()
export class SecretSealing {
  private readonly logger = new Logger('WebhookSecrets');
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: SecretKeys,
  ) {}

  /**
   * Seals the secrets of `webhook-secrets.db` (and of a `.imported` copy an earlier version set
   * aside after sealing) into the store, then deletes the plaintext file: the store now holds
   * every secret, sealed, and a deleted file cannot leak through a later backup of DATA_DIR.
   */
  async importLegacyFile(): Promise<void> {
    const base = join(this.config.dataDir, LEGACY_SECRETS_FILE);
    for (const file of [base, `${base}.imported`]) {
      if (!existsSync(file)) continue;
      let imported: number;
      try {
        imported = await this.sealSecretsOf(file);
        // SQLite's journal files beside it may hold the same rows.
        for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) rmSync(path, { force: true });
      } catch (err) {
        this.logger.error(`Importing ${file} failed (it stays, for the next start): ${(err as Error).message}`);
        continue;
      }
      this.logger.warn(
        `Imported ${imported} webhook signing secrets from ${file} into the event store, sealed, and deleted the ` +
          `file (it held them in plaintext): delete its backups too`,
      );
    }
  }

  /** Seals each secret of a legacy file into its endpoint's key stream; how many were new there. */
  private async sealSecretsOf(file: string): Promise<number> {
    let imported = 0;
    const db = new Database(file, { fileMustExist: true });
    try {
      const rows = db.prepare('SELECT endpoint_id, fingerprint, secret FROM webhook_signing_secrets').all() as Array<{
        endpoint_id: string;
        fingerprint: string;
        secret: string;
      }>;
      for (const row of rows) {
        try {
          if (await this.keys.importSecret(row.endpoint_id, row.fingerprint, row.secret)) imported++;
        } catch (err) {
          // A secret whose endpoint was never created (its create failed after the file write).
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
    } finally {
      db.close();
    }
    return imported;
  }

  /** Ends a re-seal in progress at its next step (shutdown). */
  stop(): void {
    this.stopped = true;
  }

  async resealUnderCurrentKey(): Promise<void> {
    const report = await this.keys.resealAll(undefined, () => this.stopped);
    if (report.resealed > 0)
      this.logger.log(
        `Re-sealed the signing secrets of ${report.resealed} webhook endpoints under the current SECRETS_KEY`,
      );
  }
}

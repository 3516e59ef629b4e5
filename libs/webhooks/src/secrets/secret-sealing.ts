import { APP_CONFIG, type AppConfig, NotFoundError } from '@filing/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { SecretKeys } from './secret-keys';

/** Where versions before the secrets moved into the event store kept them, in plaintext. */
export const LEGACY_SECRETS_FILE = 'webhook-secrets.db';

/**
 * The signing secrets' two start-up chores, both writes to the endpoints' key streams
 * (secret-keys.ts), each guarded by what the stream holds:
 * - **Import** from `DATA_DIR/webhook-secrets.db` (older versions kept the secrets there and put
 *   only fingerprints in events): each secret is sealed into its endpoint's key stream, then the
 *   file is renamed `webhook-secrets.db.imported`. A failure leaves the file for the next start.
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

  async importLegacyFile(): Promise<void> {
    const file = join(this.config.dataDir, LEGACY_SECRETS_FILE);
    if (!existsSync(file)) return;
    let imported = 0;
    try {
      const db = new Database(file);
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
      renameSync(file, `${file}.imported`);
    } catch (err) {
      this.logger.error(`Importing ${file} failed (it stays, for the next start): ${(err as Error).message}`);
      return;
    }
    this.logger.warn(
      `Imported ${imported} webhook signing secrets from ${file} into the event store, sealed; the file is now ` +
        `${LEGACY_SECRETS_FILE}.imported and holds them in plaintext: delete it (and its backups) once you no longer need it`,
    );
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

import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { APP_CONFIG, type AppConfig, NotFoundError, ProjectionRunner, SecretBox } from '@filing/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { secretContext } from '../endpoints/endpoint.events';
import { EndpointsService } from '../endpoints/endpoints.service';
import { EndpointsQueries } from '../read-model/endpoints.queries';

/** Where versions before the secrets moved into the event store kept them, in plaintext. */
export const LEGACY_SECRETS_FILE = 'webhook-secrets.db';
/** How long the re-seal waits for the read models to catch up with the store at start. */
const CATCH_UP_MS = 60_000;

/**
 * The signing secrets' two start-up chores, both `EndpointSecretSealed` events guarded by what
 * the stream holds (so several instances doing them at once write each secret once):
 * - **Import** from `DATA_DIR/webhook-secrets.db` (older versions kept the secrets there and put
 *   only fingerprints in events): each secret is sealed into its endpoint's stream, then the
 *   plaintext file is deleted. A failure leaves the file for the next start.
 * - **Re-seal** under the current SECRETS_KEY every secret still sealed under a previous one
 *   (SECRETS_KEY_PREVIOUS), so that key can be dropped once an instance has run.
 */
@Injectable()
export class SecretSealing {
  private readonly logger = new Logger('WebhookSecrets');
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly box: SecretBox,
    private readonly endpoints: EndpointsService,
    private readonly queries: EndpointsQueries,
    private readonly runner: ProjectionRunner,
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

  /** Seals each secret of a legacy file into its endpoint's stream; how many were new there. */
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
        const sealed = this.box.seal(row.secret, secretContext(row.endpoint_id));
        try {
          if (await this.endpoints.sealSecret(row.endpoint_id, row.fingerprint, sealed, null)) imported++;
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
    // In short waits, so a shutdown does not wait for the catch-up.
    const head = await this.store.headPosition();
    const giveUpAt = Date.now() + CATCH_UP_MS;
    while (!(await this.runner.waitFor(head, 1_000))) {
      if (this.stopped || Date.now() > giveUpAt) return;
    }
    const stale: Array<{ endpointId: string; fingerprint: string; sealed: string }> = [];
    const now = Date.now();
    for (const row of this.queries.sealedSecrets()) {
      if (row.secret_sealed && !this.box.isCurrent(row.secret_sealed)) {
        stale.push({ endpointId: row.id, fingerprint: row.secret_fingerprint, sealed: row.secret_sealed });
      }
      const previousSigns = row.previous_expires_at !== null && Date.parse(row.previous_expires_at) > now;
      if (
        previousSigns &&
        row.previous_sealed &&
        row.previous_fingerprint &&
        !this.box.isCurrent(row.previous_sealed)
      ) {
        stale.push({ endpointId: row.id, fingerprint: row.previous_fingerprint, sealed: row.previous_sealed });
      }
    }
    let resealed = 0;
    for (const { endpointId, fingerprint, sealed } of stale) {
      if (this.stopped) return;
      try {
        const context = secretContext(endpointId);
        if (
          await this.endpoints.sealSecret(
            endpointId,
            fingerprint,
            this.box.seal(this.box.open(sealed, context), context),
            sealed,
          )
        )
          resealed++;
      } catch (err) {
        // A SecretBoxError (sealed under a key this instance lacks: SECRETS_KEY_PREVIOUS dropped too early) names key ids only.
        this.logger.error(
          `Re-sealing the signing secret of webhook endpoint ${endpointId} failed: ${(err as Error).message}`,
        );
      }
    }
    if (resealed > 0)
      this.logger.log(
        `Re-sealed ${resealed} webhook signing secrets under the current SECRETS_KEY (key ${this.box.keyId})`,
      );
  }
}

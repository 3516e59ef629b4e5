import { cachedStatement, type Projection, type RecordedEnvelope, RegisterProjection } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { JURISDICTION_ADDED, JURISDICTION_UPDATED, type JurisdictionEvent } from '../jurisdiction.events';

/**
 * `jurisdictions`: one row per registration, scoped by account_id, with what the API answers.
 * The indexes serve the list: account, optionally one filter, then id (the keyset order).
 */
@Injectable()
@RegisterProjection()
export class JurisdictionsProjection implements Projection {
  readonly name = 'jurisdictions';
  readonly version = 1;
  readonly tables = ['jurisdictions'];
  readonly handles = ['jurisdictions.'];

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS jurisdictions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        code TEXT NOT NULL,
        registration_type TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS jurisdictions_by_account ON jurisdictions (account_id, id);
      CREATE INDEX IF NOT EXISTS jurisdictions_by_account_entity ON jurisdictions (account_id, entity_id, id);
      CREATE INDEX IF NOT EXISTS jurisdictions_by_account_status ON jurisdictions (account_id, status, id);
    `);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const e = event as RecordedEnvelope<JurisdictionEvent>;
    const { metadata } = e;
    const version = Number(e.revision);
    switch (e.type) {
      case JURISDICTION_ADDED:
        cachedStatement(
          db,
          `INSERT INTO jurisdictions (id, account_id, entity_id, code, registration_type, status, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          e.data.jurisdiction_id,
          metadata.account_id,
          e.data.entity_id,
          e.data.code,
          e.data.registration_type,
          e.data.status,
          metadata.occurred_at,
          metadata.occurred_at,
          version,
        );
        return;
      case JURISDICTION_UPDATED:
        cachedStatement(
          db,
          'UPDATE jurisdictions SET registration_type = ?, status = ?, updated_at = ?, version = ? WHERE id = ?',
        ).run(e.data.registration_type, e.data.status, metadata.occurred_at, version, e.data.jurisdiction_id);
        return;
    }
  }
}

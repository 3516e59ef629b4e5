import { cachedStatement, type Projection, type RecordedEnvelope, RegisterProjection } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import { ENTITY_CREATED, ENTITY_UPDATED, type EntityEvent } from '../entity.events';

/**
 * `entities`: one row per entity, scoped by account_id, with what the API answers. The indexes
 * serve the list: account, optionally one filter, then id (the keyset pagination order).
 */
@Injectable()
@RegisterProjection()
export class EntitiesProjection implements Projection {
  readonly name = 'entities';
  readonly version = 1;
  readonly tables = ['entities'];
  readonly handles = ['entities.'];

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS entities (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        name TEXT NOT NULL,
        name_folded TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        status TEXT NOT NULL,
        formation_jurisdiction TEXT,
        formation_date TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS entities_by_account ON entities (account_id, id);
      CREATE INDEX IF NOT EXISTS entities_by_account_status ON entities (account_id, status, id);
      CREATE INDEX IF NOT EXISTS entities_by_account_type ON entities (account_id, entity_type, id);
    `);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const e = event as RecordedEnvelope<EntityEvent>;
    const { metadata } = e;
    const version = Number(e.revision);
    switch (e.type) {
      case ENTITY_CREATED:
        cachedStatement(
          db,
          `INSERT INTO entities (id, account_id, name, name_folded, entity_type, status, formation_jurisdiction,
             formation_date, created_at, updated_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          e.data.entity_id,
          metadata.account_id,
          e.data.name,
          fold(e.data.name),
          e.data.entity_type,
          e.data.status,
          e.data.formation_jurisdiction,
          e.data.formation_date,
          metadata.occurred_at,
          metadata.occurred_at,
          version,
        );
        return;
      case ENTITY_UPDATED:
        cachedStatement(
          db,
          `UPDATE entities SET name = ?, name_folded = ?, status = ?, formation_jurisdiction = ?, formation_date = ?,
             updated_at = ?, version = ? WHERE id = ?`,
        ).run(
          e.data.name,
          fold(e.data.name),
          e.data.status,
          e.data.formation_jurisdiction,
          e.data.formation_date,
          metadata.occurred_at,
          version,
          e.data.entity_id,
        );
        return;
    }
  }
}

/** Case-folded in JS: SQLite's lower() only knows ASCII. */
export function fold(text: string): string {
  return text.toLowerCase();
}

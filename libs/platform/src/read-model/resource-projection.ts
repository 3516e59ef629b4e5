import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { RecordedEnvelope } from '../events/envelope';
import { MultiRowInsert } from '../projections/multi-row-insert';
import type { Projection } from '../projections/projection';
import { cachedStatement } from '../projections/statements';
import { forgetIds } from './known-ids';
import {
  columnNames,
  CREATED_AT_JSON,
  CREATED_AT_MARK,
  declaredColumns,
  ResourceAnswer,
  storedAsIs,
} from './resource-answer';
import { API_JSON_COLUMN, RESOURCE_TABLE_LAYOUT, type ResourceTable } from './resource-table';

/**
 * The projection of a declared table. Every event but `deletedBy` upserts the row from the
 * event's data: the first makes it (created_at), later ones replace the fields (updated_at,
 * version). A family's provider, registered with the runner by its own class:
 * `@RegisterProjection() class TasksProjection extends ResourceProjection.of(TASKS_TABLE) {}`.
 */
export class ResourceProjection implements Projection {
  /** A projection class of `table` with a constructor Nest can call. */
  static of(table: ResourceTable, version?: number) {
    @Injectable()
    class DeclaredProjection extends ResourceProjection {
      constructor() {
        super(table, version);
      }
    }
    return DeclaredProjection;
  }

  readonly name: string;
  readonly tables: readonly string[];
  readonly handles: readonly string[];
  /** `apply` finds rows by id alone. */
  readonly indexesAfterLoad = true;
  /** The runner's version: the family's (`familyVersion`) and the platform's row layout, e.g. 201. */
  readonly version: number;
  private readonly columns: readonly string[];
  /** The event data → each declared column's value (a JSON column's as its text). */
  private readonly valueOf: readonly ((data: Readonly<Record<string, unknown>>) => unknown)[];
  /** For each answered column, its place among the declared ones and whether its value reads back as written. */
  private readonly answeredStored: readonly { readonly index: number; readonly asIs: (value: unknown) => boolean }[];
  private readonly answer: ResourceAnswer<object>;
  private readonly upsert: string;
  /** A rebuild's rows, many to a statement: `upsert` with the update's answer computed from the inserted one. */
  private readonly rebuiltRows: MultiRowInsert;

  constructor(
    private readonly table: ResourceTable,
    /** Bump it when the table or the meaning of its rows changes: the runner rebuilds it. */
    familyVersion = 1,
  ) {
    const { name } = table;
    this.name = name;
    this.tables = [name];
    this.handles = [`${name}.`];
    this.version = RESOURCE_TABLE_LAYOUT * 100 + familyVersion;
    this.columns = columnNames(table);
    this.answer = new ResourceAnswer(table);
    const { derived = {}, json = [] } = table;
    this.valueOf = this.columns.map((c) =>
      derived[c] ? derived[c] : json.includes(c) ? (data) => JSON.stringify(data[c]) : (data) => data[c],
    );
    this.answeredStored = declaredColumns(table).flatMap(([c, type], index) =>
      derived[c] ? [] : [{ index, asIs: storedAsIs(type) }],
    );
    const all = ['id', 'account_id', ...this.columns, 'created_at', 'updated_at', 'version', API_JSON_COLUMN];
    const replaced = [...this.columns, 'updated_at', 'version'].map((c) => `${c} = excluded.${c}`);
    // One statement per event: on an update the answer's text around its created_at comes bound
    // (null: none, see apply) and the created_at it holds is the stored one (json_quote gives the
    // same text as JSON.stringify for the ISO times created_at holds).
    this.upsert = `INSERT INTO ${name} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})
      ON CONFLICT (id) DO UPDATE SET ${replaced.join(', ')},
        ${API_JSON_COLUMN} = coalesce(? || json_quote(created_at) || ?, '')`;
    // The same upsert for many rows, each bound with its whole answer: an update keeps the answer
    // but for the created_at it holds, which it takes from the stored row. The answer ends with
    // created_at, updated_at and version (ResourceAnswer), so the text after created_at is
    // rebuilt from the row's own columns and the text before it is what precedes both.
    const after = `',"updated_at":' || json_quote(excluded.updated_at) || ',"version":' || printf('%d', excluded.version) || '}'`;
    const answer = `excluded.${API_JSON_COLUMN}`;
    this.rebuiltRows = new MultiRowInsert(
      `INSERT INTO ${name} (${all.join(', ')})`,
      all.length,
      `ON CONFLICT (id) DO UPDATE SET ${replaced.join(', ')},
        ${API_JSON_COLUMN} = substr(${answer}, 1, length(${answer}) - length(json_quote(excluded.created_at)) - length(${after}))
          || json_quote(created_at) || ${after}`,
    );
  }

  setup(db: Database.Database): void {
    const { name } = this.table;
    const indexes = Object.entries(this.table.filters ?? {}).map(
      ([index, column]) =>
        `CREATE INDEX IF NOT EXISTS ${name}_by_account_${index} ON ${name} (account_id, ${column}, id);`,
    );
    db.exec(`
      CREATE TABLE IF NOT EXISTS ${name} (
        id TEXT PRIMARY KEY, account_id TEXT NOT NULL, ${this.table.columns},
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL, ${API_JSON_COLUMN} TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS ${name}_by_account ON ${name} (account_id, id);
      ${indexes.join('\n')}
    `);
    // The table may be new (a reset dropped it): no id read before holds.
    forgetIds(db, name);
  }

  /**
   * In a rebuild's batch: each resource's row as of its latest event, written once at the batch's
   * end (in first-seen order). Only in a rebuild, where any failure fails the whole run: live, a
   * row is written by its own event's apply, so a failing event halts this projection alone.
   */
  private pending: Map<unknown, PendingRow> | null = null;

  beginBatch(_db: Database.Database, batch: { readonly rebuild: boolean }): void {
    this.pending = batch.rebuild ? new Map() : null;
    this.rebuiltRows.clear();
  }

  endBatch(db: Database.Database): void {
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    for (const row of pending.values()) {
      const { id, account_id, values, created_at, updated_at, version } = row;
      if (this.exact(id, values)) {
        const answer = this.answer.renderValues(id, values, { created_at, updated_at, version });
        this.rebuiltRows.add(db, id, account_id, ...values, created_at, updated_at, version, answer);
      } else {
        // Rows are numbered as they are written: the ones before go first.
        this.rebuiltRows.flush(db);
        this.write(db, row);
      }
    }
    this.rebuiltRows.flush(db);
  }

  apply(db: Database.Database, event: RecordedEnvelope): void {
    const { name, idField } = this.table;
    const data = event.data as Readonly<Record<string, unknown>>;
    if (event.type === this.table.deletedBy) {
      this.pending?.delete(data[idField]);
      forgetIds(db, name, data[idField]);
      cachedStatement(db, `DELETE FROM ${name} WHERE id = ?`).run(data[idField]);
      return;
    }
    const values = this.valueOf.map((value) => value(data));
    const { occurred_at } = event.metadata;
    const id = data[idField];
    // In a batch, what the batch's first event of the resource would have inserted, if no row exists.
    const first = this.pending?.get(id);
    const row: PendingRow = {
      id,
      account_id: first ? first.account_id : event.metadata.account_id,
      values,
      created_at: first ? first.created_at : occurred_at,
      updated_at: occurred_at,
      version: Number(event.revision),
    };
    if (!this.pending) return this.write(db, row);
    this.pending.set(id, row);
  }

  /** Whether the row's answer can be rendered from its values: each reads back from SQLite as written. */
  private exact(id: unknown, values: readonly unknown[]): boolean {
    return typeof id === 'string' && this.answeredStored.every(({ index, asIs }) => asIs(values[index]));
  }

  /** Inserts the row, or updates it keeping its account and created_at (the first event's). */
  private write(db: Database.Database, pending: PendingRow): void {
    const { id, account_id, values, created_at, updated_at, version } = pending;
    const exact = this.exact(id, values);
    // The answer as a read of the stored row will give it: created_at is the first event's.
    let before: string | null = null;
    let after: string | null = null;
    let inserted = '';
    if (exact) {
      const rendered = this.answer.renderValues(id, values, { created_at: CREATED_AT_MARK, updated_at, version });
      const at = rendered.lastIndexOf(CREATED_AT_JSON);
      before = rendered.slice(0, at);
      after = rendered.slice(at + CREATED_AT_JSON.length);
      inserted = before + JSON.stringify(created_at) + after;
    }
    cachedStatement(db, this.upsert).run(
      id,
      account_id,
      ...values,
      created_at,
      updated_at,
      version,
      inserted,
      before,
      after,
    );
    // A value SQLite converts (e.g. a number in a TEXT column): rendered from the row as stored.
    if (!exact) {
      const stored = cachedStatement(db, `SELECT * FROM ${this.table.name} WHERE id = ?`).get(id) as object;
      cachedStatement(db, `UPDATE ${this.table.name} SET ${API_JSON_COLUMN} = ? WHERE id = ?`).run(
        this.answer.render(stored),
        id,
      );
    }
  }
}

/** A resource's row as its events so far make it, not yet written. */
interface PendingRow {
  readonly id: unknown;
  readonly account_id: string | null;
  readonly values: readonly unknown[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

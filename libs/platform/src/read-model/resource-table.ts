import { extend } from '../domain/extend';
import { Injectable } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { Resource } from '../domain/resource';
import type { RecordedEnvelope } from '../events/envelope';
import type { Page, PageRequest } from '../http/page.dto';
import type { Projection } from '../projections/projection';
import { MultiRowInsert } from '../projections/multi-row-insert';
import { ProjectionRunner } from '../projections/projection-runner';
import { cachedStatement } from '../projections/statements';
import { jsonString, jsonValue } from './json-text';
import { forgetIds, isKnownId, rememberId } from './known-ids';
import { type Filter, keysetPage, keysetPageJson } from './keyset-page';

/*
 * A family's read model, declared rather than written: one table per family, one row per
 * resource with `account_id`, the resource's fields, its times and its version; an index per list
 * filter; rows written from events that carry the resource as it is after them
 * (docs/resource-conventions.md, "Read model"). Each row also keeps its API answer ready to send
 * (`api_json`: JSON.stringify of the same view a read of the row gives), so a list or a GET sends
 * stored text instead of building and serialising objects.
 */

/** The column holding the row's answer as JSON text. */
export const API_JSON_COLUMN = 'api_json';
/** 2: rows carry `api_json`. Part of every declared projection's version, so a layout change rebuilds them. */
const RESOURCE_TABLE_LAYOUT = 2;

export interface ResourceTable {
  /** The table; also the projection's and the list's (cursors') name, and the events' prefix (`tasks.`). */
  readonly name: string;
  /** The resource id's field in the events' data, e.g. `task_id`. */
  readonly idField: string;
  /**
   * The columns between `account_id` and `created_at`, as SQL (`title TEXT NOT NULL, due_date
   * TEXT`). Each holds the event data's field of its name, unless it is `derived`.
   */
  readonly columns: string;
  /** Columns holding a JSON value as text, parsed for the API. */
  readonly json?: readonly string[];
  /** Columns for queries only (e.g. a case-folded copy to search), computed from the event data; never answered. */
  readonly derived?: Readonly<Record<string, (data: Readonly<Record<string, unknown>>) => unknown>>;
  /** List filters (`column = ?`), each served by index `<name>_by_account_<key>`: `{ entity: 'entity_id' }`. */
  readonly filters?: Readonly<Record<string, string>>;
  /** The event after which the resource is gone: its row is deleted, so every read answers it as missing. */
  readonly deletedBy?: string;
}

/** The resource as the API answers it: its id, its fields, its times and its version (not its account). */
export type ResourceView<F> = Omit<Resource<F>, 'account_id'>;

/**
 * Stands for created_at while a row's answer is rendered, split there by ResourceProjection.apply:
 * its last occurrence (only updated_at and version follow it).
 */
const CREATED_AT_MARK = '\uDC00created_at\uDC00';
const CREATED_AT_JSON = JSON.stringify(CREATED_AT_MARK);

/** The names of the declared columns, in order. */
function columnNames(table: ResourceTable): string[] {
  return declaredColumns(table).map(([name]) => name);
}

/** `[name, declared type]` of each declared column, in order. */
function declaredColumns(table: ResourceTable): [name: string, type: string][] {
  return table.columns.split(',').map((column) => {
    const [name, ...rest] = column.trim().split(/\s+/);
    return [name, rest.join(' ').toUpperCase()];
  });
}

/**
 * Whether SQLite stores a value in a column of `declaredType` so that it reads back as the same
 * JSON (its type affinity converts no value of that kind): a string in a TEXT or untyped column,
 * a finite number in any but a TEXT one, null anywhere. Anything else is rendered from the stored
 * row instead (see ResourceProjection.apply). Decided once per column, then asked per value.
 */
function storedAsIs(declaredType: string): (value: unknown) => boolean {
  const text = /CHAR|CLOB|TEXT/.test(declaredType) && !declaredType.includes('INT');
  const untyped = declaredType === '' || (declaredType.includes('BLOB') && !declaredType.includes('INT'));
  return (value) =>
    value === null ||
    (typeof value === 'string' ? text || untyped : typeof value === 'number' && Number.isFinite(value) && !text);
}

/**
 * The answer of a declared table's rows: its fields in the table's order, JSON columns parsed.
 * One serializer for the rendered column and for reads of the row's columns, so both give the
 * same bytes.
 */
class ResourceAnswer<V> {
  readonly answered: readonly string[];
  private readonly json: readonly string[];
  /**
   * The answered declared columns: each one's place among the declared columns, whether it holds
   * JSON, and the text before its value in the answer (`,"name":`).
   */
  private readonly fields: readonly {
    readonly index: number;
    readonly name: string;
    readonly json: boolean;
    readonly key: string;
  }[];
  /**
   * Whether `renderValues` may write the answer's text itself: no field name an object would
   * reorder (an array index) or not keep as its own (`__proto__`).
   */
  private readonly concatenates: boolean;

  constructor(table: ResourceTable) {
    const fields = columnNames(table).filter((column) => !table.derived?.[column]);
    this.answered = ['id', ...fields, 'created_at', 'updated_at', 'version'];
    this.json = table.json ?? [];
    this.fields = fields.map((name) => ({
      index: columnNames(table).indexOf(name),
      name,
      json: this.json.includes(name),
      key: `,${JSON.stringify(name)}:`,
    }));
    this.concatenates = fields.every((name) => !/^(0|[1-9]\d*)$/.test(name) && name !== '__proto__');
  }

  /** Exactly the API's fields, in the table's order, from a row or from the aggregate's state. */
  view(source: object): V {
    const fields = source as Record<string, unknown>;
    return Object.fromEntries(this.answered.map((name) => [name, fields[name]])) as V;
  }

  /** A row as the API answers it: its JSON columns parsed. */
  fromRow(row: object): V {
    const parsed = Object.fromEntries(
      this.json.map((name) => [name, JSON.parse((row as Record<string, string>)[name])]),
    );
    return this.view(extend(row, parsed));
  }

  /** What `api_json` holds: the row's answer as the API sends it. */
  render(row: object): string {
    return JSON.stringify(this.fromRow(row));
  }

  /**
   * `render` of a row not yet stored, from its declared columns' values in order (a JSON
   * column's as its text): the same answer, without building the row first. Written as text —
   * JSON.stringify of each value, a JSON column's text as it is (the stringify of a parsed
   * stringify is that stringify) — when the names allow it: the same bytes, no object built.
   */
  renderValues(
    id: unknown,
    values: readonly unknown[],
    times: { readonly created_at: string; readonly updated_at: string; readonly version: number },
  ): string {
    if (this.concatenates && typeof id === 'string') {
      let text = `{"id":${jsonString(id)}`;
      for (const { index, key, json } of this.fields) {
        const value = values[index];
        // JSON.stringify leaves out a property whose value is undefined (a JSON column's text never is).
        if (value !== undefined) text += key + (json ? (value as string) : jsonValue(value));
      }
      return `${text},"created_at":${jsonString(times.created_at)},"updated_at":${jsonString(times.updated_at)},"version":${jsonValue(times.version)}}`;
    }
    const answer: Record<string, unknown> = { id };
    for (const { index, name, json } of this.fields)
      answer[name] = json ? JSON.parse(values[index] as string) : values[index];
    answer.created_at = times.created_at;
    answer.updated_at = times.updated_at;
    answer.version = times.version;
    return JSON.stringify(answer);
  }
}

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

/**
 * Reads of a declared table, always within one account. Reads `runner.db` at every call: a
 * replay may have swapped the database. A family's provider: `class TasksQueries extends
 * ResourceQueries.of<TaskView, TaskFilters>(TASKS_TABLE) {}`, adding its own lookups if any.
 */
export class ResourceQueries<V, Filters extends object = object> {
  /** The queries provider of `table` (it injects the ProjectionRunner). */
  static of<V, Filters extends object = object>(table: ResourceTable) {
    @Injectable()
    class DeclaredQueries extends ResourceQueries<V, Filters> {
      constructor(runner: ProjectionRunner) {
        super(runner, table);
      }
    }
    return DeclaredQueries;
  }

  private readonly answer: ResourceAnswer<V>;
  /** The reads by id, built once: the statement cache is keyed by the text, hashed at every call. */
  private readonly sql: { readonly get: string; readonly getJson: string; readonly exists: string };

  constructor(
    protected readonly runner: ProjectionRunner,
    protected readonly table: ResourceTable,
  ) {
    this.answer = new ResourceAnswer(table);
    const byId = `FROM ${table.name} WHERE id = ? AND account_id = ?`;
    this.sql = {
      get: `SELECT * ${byId}`,
      getJson: `SELECT version, ${API_JSON_COLUMN} AS json ${byId}`,
      exists: `SELECT 1 ${byId}`,
    };
  }

  get(accountId: string, id: string): V | null {
    const row = cachedStatement(this.runner.db, this.sql.get).get(id, accountId);
    return row ? this.fromRow(row) : null;
  }

  /** The resource's answer as stored JSON text, with its version (for the ETag): what `get` gives, serialised. */
  getJson(accountId: string, id: string): { readonly version: number; readonly json: string } | null {
    return (
      (cachedStatement(this.runner.db, this.sql.getJson).get(id, accountId) as { version: number; json: string }) ??
      null
    );
  }

  /** Whether the account has the resource: from the ids found before (known-ids.ts), else a read. */
  exists(accountId: string, id: string): boolean {
    const { db } = this.runner;
    const { name } = this.table;
    if (isKnownId(db, name, accountId, id)) return true;
    const found = cachedStatement(db, this.sql.exists).get(id, accountId) !== undefined;
    if (found) rememberId(db, name, accountId, id);
    return found;
  }

  /** One page, oldest first, of the account's resources matching the filters (an undefined one is skipped). */
  list(accountId: string, filters: Filters, page: PageRequest<string>): Page<V> {
    return keysetPage<object, V>(this.runner.db, {
      table: this.table.name,
      where: [['account_id = ?', accountId], ...this.where(filters)],
      page,
      collection: this.table.name,
      map: (row) => this.fromRow(row),
    });
  }

  /**
   * `list` as the JSON text of its page in UTF-8, from the stored answers: byte for byte
   * `JSON.stringify(this.list(...))`, without reading the rows' columns or building objects.
   */
  listJson(accountId: string, filters: Filters, page: PageRequest<string>): Buffer {
    return keysetPageJson(this.runner.db, {
      table: this.table.name,
      where: [['account_id = ?', accountId], ...this.where(filters)],
      page,
      collection: this.table.name,
      jsonColumn: API_JSON_COLUMN,
    });
  }

  /** Exactly the API's fields, in the table's order, from a row or from the aggregate's state. */
  view(source: object): V {
    return this.answer.view(source);
  }

  /** The declared filters as conditions; ids are stored lower-case, and a client may send capitals. */
  protected where(filters: Filters): Filter[] {
    const values = filters as Record<string, unknown>;
    return Object.values(this.table.filters ?? {}).map((column): Filter => {
      const value = values[column];
      return [`${column} = ?`, column.endsWith('_id') && typeof value === 'string' ? value.toLowerCase() : value];
    });
  }

  /** A row as the API answers it: its JSON columns parsed. */
  protected fromRow(row: object): V {
    return this.answer.fromRow(row);
  }
}

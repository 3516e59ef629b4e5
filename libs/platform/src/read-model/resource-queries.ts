import { Injectable } from '@nestjs/common';
import type { Page, PageRequest } from '../http/page.dto';
import { ProjectionRunner } from '../projections/projection-runner';
import { cachedStatement } from '../projections/statements';
import { type Filter, keysetPage, keysetPageJson } from './keyset-page';
import { isKnownId, rememberId } from './known-ids';
import { ResourceAnswer } from './resource-answer';
import { API_JSON_COLUMN, type ResourceTable } from './resource-table';

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

import type { Resource } from '../domain/resource';

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
export const RESOURCE_TABLE_LAYOUT = 2;

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

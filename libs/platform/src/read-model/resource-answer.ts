/** How a declared table's row becomes its API answer: one serializer for the stored `api_json` and for reads. */
import { extend } from '../domain/extend';
import { jsonString, jsonValue } from './json-text';
import type { ResourceTable } from './resource-table';

/**
 * Stands for created_at while a row's answer is rendered, split there by ResourceProjection.apply:
 * its last occurrence (only updated_at and version follow it).
 */
export const CREATED_AT_MARK = '\uDC00created_at\uDC00';
export const CREATED_AT_JSON = JSON.stringify(CREATED_AT_MARK);

/** The names of the declared columns, in order. */
export function columnNames(table: ResourceTable): string[] {
  return declaredColumns(table).map(([name]) => name);
}

/** `[name, declared type]` of each declared column, in order. */
export function declaredColumns(table: ResourceTable): [name: string, type: string][] {
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
export function storedAsIs(declaredType: string): (value: unknown) => boolean {
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
export class ResourceAnswer<V> {
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

import type Database from 'better-sqlite3';
import { cachedStatement } from './statements';

/**
 * One INSERT run for many rows at a time (`INSERT … VALUES (…), (…), … <tail>`): a rebuild
 * writes hundreds of thousands of plain rows, and a native call, a bind and a statement step per
 * row cost more than the row itself. Rows are written in the order they are added — a full
 * statement's worth at once, the rest at `flush` — and a tail clause (`ON CONFLICT …`) treats
 * each row as it would alone, so the rows come out as one INSERT per row would leave them.
 */
export class MultiRowInsert {
  private readonly pending: unknown[] = [];
  /** The statement's text for each number of rows, built once. */
  private readonly sqlByRows = new Map<number, string>();

  constructor(
    /** `INSERT INTO table (a, b, c)` */
    private readonly head: string,
    private readonly columns: number,
    /** What follows the rows, e.g. `ON CONFLICT (id) DO NOTHING`. */
    private readonly tail = '',
    private readonly rowsPerStatement = 64,
  ) {}

  /** Adds a row (one value per column); writes the rows added so far once a statement's worth is there. */
  add(db: Database.Database, ...values: unknown[]): void {
    const { pending } = this;
    for (const value of values) pending.push(value);
    if (pending.length >= this.columns * this.rowsPerStatement) this.flush(db);
  }

  /** Writes one row now, after the rows not yet written (so every row keeps its place). */
  run(db: Database.Database, ...values: unknown[]): void {
    this.flush(db);
    cachedStatement(db, this.sql(1)).run(...values);
  }

  /** Writes the rows not yet written. */
  flush(db: Database.Database): void {
    const rows = this.pending.length / this.columns;
    if (rows === 0) return;
    // Spread, not the array: better-sqlite3 reads an array item by item through V8's API.
    cachedStatement(db, this.sql(rows)).run(...this.pending);
    this.pending.length = 0;
  }

  /** Forgets the rows not yet written (their transaction rolled back). */
  clear(): void {
    this.pending.length = 0;
  }

  private sql(rows: number): string {
    let sql = this.sqlByRows.get(rows);
    if (sql === undefined) {
      const row = `(${Array.from({ length: this.columns }, () => '?').join(', ')})`;
      sql = `${this.head} VALUES ${Array.from({ length: rows }, () => row).join(', ')} ${this.tail}`;
      this.sqlByRows.set(rows, sql);
    }
    return sql;
  }
}

import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';

/** Rows per INSERT statement, as the rebuild's own multi-row inserts. */
const ROWS_PER_STATEMENT = 64;

/**
 * The writing a rebuild does, without our stack: every row of a rebuilt read-model file loaded into
 * a fresh file with the same tables, the same pragmas (no journal, no fsync, a 256 MiB cache)
 * and the same order — `pages` transactions, each with its share of every table's rows in the
 * order they were inserted, by multi-row INSERTs from JavaScript arrays — then the same indexes
 * built. Reading the rows out of the rebuilt file is left out of the time.
 * `sqlite`: SQLite copies the rows itself (`INSERT … SELECT`, not its record-copying transfer),
 * the floor of any writer of these rows through SQLite. Returns the milliseconds of writing.
 */
export function writeReadModelRows(
  rebuilt: string,
  target: string,
  pages: number,
  mode: 'javascript' | 'sqlite',
): number {
  rmSync(target, { force: true });
  const db = new Database(target);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const source = new Database(rebuilt, { readonly: true });
  try {
    const tables = source
      .prepare<[], { name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    const indexes = source
      .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
      .all();
    for (const table of tables) db.exec(table.sql);
    const started = performance.now();
    if (mode === 'sqlite') {
      db.exec(`ATTACH DATABASE '${rebuilt.replace(/'/g, "''")}' AS rebuilt`);
      // A WHERE clause keeps SQLite from copying records as they are: each row is decoded and
      // inserted, as a writer of new rows would.
      db.transaction(() => {
        for (const { name } of tables) db.exec(`INSERT INTO main."${name}" SELECT * FROM rebuilt."${name}" WHERE 1`);
      })();
    } else {
      let writing = 0;
      const loads = tables.map(({ name }) => tableLoad(rebuilt, db, name, pages));
      for (let page = 0; page < pages; page++) {
        const batch = loads.map((load) => load.read(page));
        const t = performance.now();
        db.transaction(() => loads.forEach((load, i) => load.write(batch[i])))();
        writing += performance.now() - t;
      }
      loads.forEach((load) => load.close());
      if (loads.every((load) => load.total === 0)) throw new Error(`${rebuilt} holds no rows to write`);
      const indexStarted = performance.now();
      for (const { sql } of indexes) db.exec(sql);
      return writing + (performance.now() - indexStarted);
    }
    for (const { sql } of indexes) db.exec(sql);
    return performance.now() - started;
  } finally {
    source.close();
    db.close();
    rmSync(target, { force: true });
  }
}

/** One table's rows, page by page: the share of `page` of `pages` in insertion order, and their INSERTs. */
function tableLoad(rebuilt: string, db: Database.Database, table: string, pages: number) {
  const quoted = `"${table.replace(/"/g, '""')}"`;
  // A connection of its own per table: each keeps a cursor open across the pages.
  const source = new Database(rebuilt, { readonly: true });
  const total = (source.prepare(`SELECT count(*) AS n FROM ${quoted}`).get() as { n: number }).n;
  const select = source.prepare(`SELECT * FROM ${quoted}`).raw(true);
  const columns = select.columns().length;
  const cursor = select.iterate() as IterableIterator<unknown[]>;
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  const statements = new Map<number, Database.Statement>();
  const insert = (count: number) => {
    let statement = statements.get(count);
    if (statement === undefined) {
      statement = db.prepare(`INSERT INTO ${quoted} VALUES ${Array.from({ length: count }, () => row).join(', ')}`);
      statements.set(count, statement);
    }
    return statement;
  };
  let taken = 0;
  return {
    read(page: number): unknown[][] {
      const end = Math.floor(((page + 1) * total) / pages);
      const batch: unknown[][] = [];
      for (; taken < end; taken++) batch.push(cursor.next().value as unknown[]);
      return batch;
    },
    write(batch: unknown[][]): void {
      for (let i = 0; i < batch.length; i += ROWS_PER_STATEMENT) {
        const rows = batch.slice(i, i + ROWS_PER_STATEMENT);
        insert(rows.length).run(rows.flat());
      }
    },
    total,
    close(): void {
      cursor.return?.();
      source.close();
    },
  };
}

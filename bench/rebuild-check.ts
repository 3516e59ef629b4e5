import { NestFactory } from '@nestjs/core';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@filing/event-store';
import { loadConfig, ProjectionRunner, rebuildReadModels } from '@filing/platform';
import { CliModule } from '../apps/cli/src/cli.module';

/**
 * A rebuild's output, fingerprinted, to compare two versions of the rebuild byte for byte:
 * `node -r @swc-node/register bench/rebuild-check.ts <DATA_DIR> <out.db>` rebuilds every read model
 * of DATA_DIR's events into out.db (as `npm run cli -- replay` does, unpublished) and prints its
 * rate, its CPU time per event, and a SHA-256 per table over every row with its rowid (in rowid
 * order) and over the schema (tables and indexes as SQLite keeps their SQL). Run it in two
 * checkouts over the same DATA_DIR: equal digests, equal read models.
 */
async function main(): Promise<void> {
  const [dataDir, file] = process.argv.slice(2);
  if (!dataDir || !file) throw new Error('usage: rebuild-check.ts <DATA_DIR> <out.db>');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
  console.log(
    `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const threadsBefore = threadTimes();
  const cpu = process.cpuUsage();
  // Sampled while it runs too: a thread that has ended by the last sample (the rebuild's writer) counts as last seen.
  const seen = new Map<number, number>();
  const sample = () => threadTimes().forEach((ms, tid) => seen.set(tid, ms));
  const result = await rebuildReadModels({
    store,
    projections: app.get(ProjectionRunner).registered,
    file,
    onProgress: sample,
    progressIntervalMs: 100,
  });
  const { user, system } = process.cpuUsage(cpu);
  sample();
  const threadsAfter = seen;
  await store.close();
  await app.close();
  const rate = Math.round(result.events / (result.elapsedMs / 1000));
  const perEvent = ((user + system) / result.events).toFixed(2);
  console.log(`events ${result.events}  ${result.elapsedMs} ms  ${rate} events/s  ${perEvent} µs CPU/event`);
  // Per thread (Linux): which one caps the rate. The main thread's task id is the process id.
  const busy = [...threadsAfter]
    .map(([tid, ms]) => [tid, ms - (threadsBefore.get(tid) ?? 0)] as const)
    .filter(([, ms]) => ms >= 50)
    .map(([tid, ms]) => `${tid === process.pid ? 'main' : tid} ${((ms * 1000) / result.events).toFixed(2)} µs`);
  console.log(`CPU per event by thread: ${busy.join(', ')}`);
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  if (process.env.NO_HASH) return;
  const db = new Database(file, { readonly: true });
  const all = createHash('sha256');
  const schema = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all();
  all.update(JSON.stringify(schema));
  const tables = (schema as { type: string; name: string }[]).filter((s) => s.type === 'table').map((s) => s.name);
  for (const table of tables) {
    const hash = createHash('sha256');
    let rows = 0;
    const select = db.prepare(`SELECT ${rowsOf(db, table)}`).raw(true);
    for (const row of select.iterate() as IterableIterator<unknown[]>) {
      rows++;
      hash.update(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) + '\n');
    }
    const digest = hash.digest('hex');
    all.update(`${table} ${digest}\n`);
    console.log(`  ${table.padEnd(40)} ${String(rows).padStart(9)} rows  ${digest.slice(0, 16)}`);
  }
  db.close();
  console.log(`digest ${all.digest('hex')}`);
}

/** The table's rows with their rowids in rowid order; a WITHOUT ROWID table's in its primary key's order. */
function rowsOf(db: Database.Database, table: string): string {
  const quoted = `"${table.replace(/"/g, '""')}"`;
  const { wr } = db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').get(table) as { wr: number };
  if (!wr) return `rowid AS __rowid, * FROM ${quoted} ORDER BY rowid`;
  const key = (
    db.prepare(`SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`).all(table) as { name: string }[]
  )
    .map((c) => `"${c.name.replace(/"/g, '""')}"`)
    .join(', ');
  return `* FROM ${quoted} ORDER BY ${key}`;
}

/** CPU milliseconds so far of each of this process's threads, from /proc (clock ticks of 10 ms). */
function threadTimes(): Map<number, number> {
  const times = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    times.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return times;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@filing/event-store';
import { openRawEvents } from './raw-events-db';
import { printComparison, rate } from './report';

const APPENDS = Number(process.env.BENCH_STORE_APPENDS ?? 20_000);
const CALLERS = 64;

/**
 * Appends/s of single-event appends from 64 concurrent callers on the sqlite adapter (group
 * commit), next to a raw better-sqlite3 loop with the same durability (WAL, synchronous=FULL,
 * one row per transaction); then the catch-up rate of a `$all` subscription next to a raw scan.
 */
export async function storeBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
  try {
    const adapterMs = await adapterAppends(join(dir, 'events.db'));
    const rawMs = rawInserts(join(dir, 'raw.db'));
    printComparison(
      `sqlite adapter: ${APPENDS} single-event appends, ${CALLERS} callers`,
      rate(APPENDS, adapterMs),
      'raw better-sqlite3 insert loop, same durability',
      rate(APPENDS, rawMs),
      'appends/s',
    );

    const { events, subscriptionMs, scanMs } = await catchUp(join(dir, 'events.db'));
    printComparison(
      `$all catch-up subscription over ${events} events`,
      rate(events, subscriptionMs),
      'raw better-sqlite3 SELECT of the same rows',
      rate(events, scanMs),
      'events/s',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ms for `appends` single-event appends from `CALLERS` concurrent callers (the write bench's baseline too). */
export async function adapterAppends(file: string, appends = APPENDS): Promise<number> {
  const store = new SqliteEventStore({ file });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      while (next < appends) {
        const i = next++;
        await store.appendToStream(`bench-${caller}-${i % 50}`, [
          { id: randomUUID(), type: 'bench.Appended', data: { i, payload: 'x'.repeat(200) } },
        ]);
      }
    }),
  );
  const ms = performance.now() - started;
  await store.close();
  return ms;
}

function rawInserts(file: string): number {
  const { db, insert } = openRawEvents(file);
  const started = performance.now();
  for (let i = 0; i < APPENDS; i++) {
    insert.run(
      `bench-${i % 50}`,
      Math.floor(i / 50),
      randomUUID(),
      'bench.Appended',
      JSON.stringify({ i, payload: 'x'.repeat(200) }),
      '{}',
      Date.now(),
    );
  }
  const ms = performance.now() - started;
  db.close();
  return ms;
}

async function catchUp(file: string): Promise<{ events: number; subscriptionMs: number; scanMs: number }> {
  const store = new SqliteEventStore({ file });
  let events = 0;
  const started = performance.now();
  const sub = store.subscribeToAll({ from: 'start' });
  for await (const m of sub) {
    if (m.kind === 'event') events++;
    if (m.kind === 'caught-up') break;
  }
  const subscriptionMs = performance.now() - started;
  await sub.stop();
  await store.close();

  const db = new Database(file, { readonly: true });
  const scanStarted = performance.now();
  let scanned = 0;
  for (const row of db.prepare('SELECT * FROM events ORDER BY position').iterate()) {
    JSON.parse((row as { data: string }).data);
    scanned++;
  }
  const scanMs = performance.now() - scanStarted;
  db.close();
  if (scanned !== events) throw new Error(`catch-up saw ${events} events, the table has ${scanned}`);
  return { events, subscriptionMs, scanMs };
}

/**
 * The write bench's baseline, in its own process: a bare Fastify route that turns the order body
 * into one event row and inserts it into a better-sqlite3 file with the event store's durability
 * (WAL, synchronous=FULL), requests arriving together sharing one transaction (group commit, one
 * fsync), answering 201 only after the commit. No auth, no validation, no read model. Prints
 * `{url}` on stdout; event-loop delay over IPC (bench/event-loop-delay.ts).
 */
import Fastify from 'fastify';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveEventLoopDelay } from './event-loop-delay';
import { openRawEvents } from './raw-events-db';

interface Waiting {
  readonly row: unknown[];
  readonly done: (err: Error | null) => void;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-write-raw-'));
  const { db, insert } = openRawEvents(join(dir, 'raw.db'));
  const commit = db.transaction((rows: Waiting[]) => {
    for (const w of rows) insert.run(...w.row);
  });

  let queue: Waiting[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    try {
      commit.immediate(batch);
      for (const w of batch) w.done(null);
    } catch (err) {
      for (const w of batch) w.done(err as Error);
    }
  };
  const append = (row: unknown[]) =>
    new Promise<void>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ row, done: (err) => (err ? reject(err) : resolve()) });
    });

  const app = Fastify();
  app.post('/external-api/v1/orders', async (request, reply) => {
    const id = randomUUID();
    const order = { id, status: 'submitted', ...(request.body as object) };
    await append([`order-${id}`, 0, randomUUID(), 'orders.OrderSubmitted', JSON.stringify(order), '{}', Date.now()]);
    return reply.code(201).send(order);
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  serveEventLoopDelay();
  process.stdout.write(JSON.stringify({ url }) + '\n');
  process.once('SIGTERM', () => {
    void app.close().finally(() => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Child process for the kill -9 test: appends from 64 concurrent callers as fast as it can and
 * prints one `ack <stream> <first-event-id> <count>` line per acknowledged append. It never exits
 * by itself: the test kills it with SIGKILL mid-flight.
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '../../libs/event-store/src/sqlite/sqlite-event-store';

const file = process.argv[2];
const store = new SqliteEventStore({ file });
const CALLERS = 64;

async function caller(n: number): Promise<never> {
  for (let i = 0; ; i++) {
    const stream = `load-${n}-${i % 10}`;
    // Every third append writes three events: after the kill each must be all there or not at all.
    const count = i % 3 === 0 ? 3 : 1;
    const events = Array.from({ length: count }, (_, k) => ({
      id: randomUUID(),
      type: 'load.Appended',
      data: { caller: n, i, k, of: count },
    }));
    await store.appendToStream(stream, events);
    process.stdout.write(`ack ${stream} ${events[0].id} ${count}\n`);
  }
}

for (let n = 0; n < CALLERS; n++) void caller(n);

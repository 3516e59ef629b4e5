/**
 * The writer thread's entry (started by writer-thread.ts): its own connection to the event log,
 * and group commit — every call waiting in the port when the thread is free is committed in
 * one transaction, so one fsync acknowledges them all.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { openEventsDatabase, SqliteWriter } from './sqlite-writer';
import {
  packOutcomes,
  unpackRequests,
  type WriterAnswer,
  type WriterCall,
  type WriterThreadOptions,
} from './writer-thread';

// Its name in `top -H`, `ps -L` and perf (Linux; elsewhere unnamed): docs/operations.md, "Threads".
try {
  writeFileSync('/proc/thread-self/comm', 'store-writer');
} catch {
  // Not Linux: the thread keeps the process's name.
}
const port = parentPort!;
const options = workerData as WriterThreadOptions;
const db = openEventsDatabase(options.file, options.synchronous);
const writer = new SqliteWriter(db, options.maxBatch);
port.postMessage('ready');

port.on('message', (first: WriterCall | 'close') => {
  const calls: WriterCall[] = [];
  let close = false;
  for (let message: WriterCall | 'close' | undefined = first; message !== undefined;) {
    if (message === 'close') close = true;
    else calls.push(message);
    message = receiveMessageOnPort(port)?.message as WriterCall | 'close' | undefined;
  }
  const unpacked = calls.map((c) => unpackRequests(c.requests));
  const outcomes = writer.commit(unpacked.flat());
  let at = 0;
  for (const [i, call] of calls.entries()) {
    const mine = outcomes.slice(at, (at += unpacked[i].length));
    port.postMessage({ id: call.id, outcomes: packOutcomes(mine) } satisfies WriterAnswer);
  }
  if (close) {
    db.close();
    port.close();
  }
});

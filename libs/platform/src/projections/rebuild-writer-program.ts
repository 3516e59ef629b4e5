/**
 * The thread's whole program, plain JavaScript (it runs the same from the TypeScript sources and
 * from the build). It owns a bulk rebuild's connection while the rebuild loads: each message is
 * a batch's statements (as `BatchEncoder` writes them), run in one transaction that a `commit`
 * message ends. A `read` message answers on the
 * replies port and wakes the waiting owner through the shared flag. After a failure it runs
 * nothing more and answers every message with the failure.
 */
export const REBUILD_WRITER_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
// Its name in top -H, ps -L and perf (Linux; elsewhere unnamed): docs/operations.md, "Threads".
try { require('node:fs').writeFileSync('/proc/thread-self/comm', 'rebuild-writer'); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = OFF');
db.pragma('synchronous = OFF');
// 64 MiB: its writes go mostly to the tables' right edges; 256 MiB here cost ~270 MB more peak
// RSS at 1M events and saved no CPU.
db.pragma('cache_size = -65536');
db.pragma('busy_timeout = 5000');
const flag = new Int32Array(workerData.flag);
const replies = workerData.replies;
const texts = [];
const statements = [];
let failure = null;
/** Batches run since the last COMMIT. */
let uncommitted = 0;
function statement(id) {
  return statements[id] || (statements[id] = db.prepare(texts[id]));
}
/** An encoded batch's values in order: each call takes the next of the given kind. */
function valuesOf(batch) {
  const { numbers, strings } = batch;
  let number = 0;
  let string = 0;
  return (kind) =>
    kind === 1 ? strings[string++] : kind === 2 ? numbers[number++] : kind === 3 ? BigInt(strings[string++]) : null;
}
/** Runs each statement of an encoded batch (as BatchEncoder writes it), in order. */
function run(batch) {
  if (!db.inTransaction) db.exec('BEGIN IMMEDIATE');
  const { statements: list, count, kinds } = batch;
  const next = valuesOf(batch);
  let value = 0;
  for (let i = 0; i < count; i += 2) {
    const id = list[i];
    const values = list[i + 1];
    if (values < 0) {
      db.exec(texts[id]);
      continue;
    }
    const params = new Array(values);
    for (let j = 0; j < values; j++, value++) params[j] = next(kinds[value]);
    // Spread, not the array: better-sqlite3 binds arguments directly but reads an array item by
    // item through V8's API (~15 % of a row's bind, ~6 % of this thread in a rebuild).
    statement(id).run(...params);
  }
}
/** The one statement of an encoded read, and its values. */
function readOf(batch) {
  const { statements: list, kinds } = batch;
  const next = valuesOf(batch);
  return [list[0], Array.from({ length: list[1] }, (_, j) => next(kinds[j]))];
}
parentPort.on('message', (message) => {
  if (message.close) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    parentPort.close();
    replies.close();
    return;
  }
  for (const text of message.texts) texts.push(text);
  if (message.rollback) {
    if (db.inTransaction) db.exec('ROLLBACK');
    uncommitted = 0;
    return;
  }
  let result;
  if (failure === null) {
    try {
      run(message.batch);
      if (message.read) {
        const [id, params] = readOf(message.read.params);
        result = message.read.all ? statement(id).all(params) : statement(id).get(params);
      }
      // A commit writes every page the transaction dirtied, and a page at a table's right edge
      // is dirtied by every batch: committed every few batches, each such page is written once for
      // all of them. Nothing reads the scratch file meanwhile; a failure fails the whole rebuild.
      if (message.commit && (message.final || ++uncommitted >= workerData.batchesPerCommit)) {
        if (db.inTransaction) db.exec('COMMIT');
        uncommitted = 0;
      }
    } catch (err) {
      failure = String(err && err.stack ? err.stack : err);
      if (db.inTransaction) db.exec('ROLLBACK');
    }
  }
  if (message.read) {
    replies.postMessage(failure === null ? { result } : { failure });
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  }
  if (message.commit) parentPort.postMessage({ failure });
});
`;

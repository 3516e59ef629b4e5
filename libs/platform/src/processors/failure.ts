import { EventStoreUnavailableError } from '@filing/event-store';

/**
 * A failure that says nothing about the event being handled (a dependency was down, the disk
 * full): the processor retries the event with back-off for as long as it takes, and never halts
 * or parks on it. Handlers throw it for such failures of their own.
 */
export class TransientError extends Error {
  override readonly name = 'TransientError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Error codes of failures outside the event's content: SQLite's busy, locked, full, I/O,
 * read-only and damaged-file errors (better-sqlite3 puts the extended code in `code`), and Node's
 * system errors for the disk and the network. A broken environment fails every event alike:
 * taking it for poison would halt or park one good event after another.
 */
const TRANSIENT_CODES = [
  /^SQLITE_(BUSY|LOCKED|FULL|IOERR|NOMEM|PROTOCOL|CANTOPEN|READONLY|CORRUPT|NOTADB|PERM)(_|$)/,
  /^(ENOSPC|EIO|EDQUOT|EMFILE|ENFILE|EAGAIN|EBUSY|ENOMEM|EROFS|EACCES|EPERM)$/,
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENETDOWN|EAI_AGAIN|ENOTFOUND)$/,
  /^UND_ERR_(CONNECT_TIMEOUT|SOCKET|CLOSED)$/,
];

export type FailureKind = 'transient' | 'poison';

/**
 * The one rule for every processor: transient when what failed is the store, the disk or the
 * network (anywhere in the cause chain, whoever wrapped it); poison otherwise — the handler threw
 * on the event's own content, and the processor counts repeats before halting or parking.
 */
export function classify(failure: unknown): FailureKind {
  const seen = new Set<unknown>();
  for (let err = failure; err instanceof Error && !seen.has(err); err = err.cause) {
    seen.add(err);
    if (err instanceof TransientError || err instanceof EventStoreUnavailableError) return 'transient';
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.some((pattern) => pattern.test(code))) return 'transient';
  }
  return 'poison';
}

/** What an attempt's result means for the delivery (CONTRACT.md §5). */
export type AttemptVerdict = 'delivered' | 'retry' | 'failed';

export type AttemptResult =
  | { readonly kind: 'response'; readonly statusCode: number }
  /** No HTTP status: timeout, refused connection, TLS failure, address refused by the guard… */
  | { readonly kind: 'error'; readonly error: AttemptErrorKind };

export type AttemptErrorKind = 'timeout' | 'connection' | 'tls' | 'dns' | 'address_refused' | 'other';

export function classifyAttempt(result: AttemptResult): AttemptVerdict {
  if (result.kind === 'error') {
    // A URL that now resolves to a refused address will not get better by retrying soon, but DNS
    // can change back: treat it like any network failure, within the same bounded schedule.
    return 'retry';
  }
  const s = result.statusCode;
  if (s >= 200 && s < 300) return 'delivered';
  if (s >= 500 || s === 408 || s === 429) return 'retry';
  return 'failed';
}

/**
 * An answer that stops the endpoint, not only the delivery: 410 Gone means the receiver is gone
 * for good (Standard Webhooks: disable the endpoint). Everything else concerns this delivery alone.
 */
export function endpointDisabledBy(result: AttemptResult): 'gone' | null {
  return result.kind === 'response' && result.statusCode === 410 ? 'gone' : null;
}

/**
 * An answer that pauses the whole endpoint, not only this delivery: a 429 with `Retry-After`
 * (CONTRACT.md §5). How long, in ms; null for anything else.
 */
export function endpointPausedFor(result: AttemptResult, retryAfterMs: number | null): number | null {
  return result.kind === 'response' && result.statusCode === 429 && retryAfterMs !== null ? retryAfterMs : null;
}

const TLS_CODES = /^(ERR_TLS_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|ERR_SSL_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** Maps a Node/undici error to its kind, by code (messages may carry URLs or addresses). */
export function errorKind(err: unknown): AttemptErrorKind {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const fields = e as { code?: unknown; name?: unknown };
    const code = typeof fields.code === 'string' ? fields.code : '';
    const name = typeof fields.name === 'string' ? fields.name : '';
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
      return 'timeout';
    if (name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'UND_ERR_ABORTED') return 'timeout';
    if (code === 'ADDRESS_REFUSED') return 'address_refused';
    if (TLS_CODES.test(code)) return 'tls';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
    if (
      [
        'ECONNREFUSED',
        'ECONNRESET',
        'EPIPE',
        'EHOSTUNREACH',
        'ENETUNREACH',
        'UND_ERR_SOCKET',
        'UND_ERR_CLOSED',
      ].includes(code)
    ) {
      return 'connection';
    }
    e = (e as { cause?: unknown }).cause;
  }
  return 'other';
}

/** The words shown in the delivery log for an error: no addresses, no secrets. */
export function errorMessage(kind: AttemptErrorKind): string {
  switch (kind) {
    case 'timeout':
      return 'timeout: the receiver did not answer in time';
    case 'connection':
      return 'connection: could not connect or the connection was lost';
    case 'tls':
      return 'tls: the receiver certificate could not be verified';
    case 'dns':
      return 'dns: the host name could not be resolved';
    case 'address_refused':
      return 'address_refused: the host resolves to a non-public address';
    default:
      return 'error: the request failed';
  }
}

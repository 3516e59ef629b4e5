import { NetworkError } from './errors';

/** The subset of `fetch` the SDK uses: pass undici's `fetch` (or a test double) to replace the global one. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * One HTTP exchange with a timeout, turning every failure without an HTTP answer (DNS, refused,
 * reset, TLS, timeout, abort) into a NetworkError. The error names method and URL, never headers.
 */
export async function send(
  fetchImpl: FetchLike,
  url: string,
  init: RequestInit & { method: string },
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Response> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
  try {
    combined.throwIfAborted();
    return await fetchImpl(url, { ...init, signal: combined, redirect: 'manual' });
  } catch (cause) {
    const timedOut = timeout.aborted;
    const aborted = signal?.aborted ?? false;
    const reason = timedOut ? `timed out after ${timeoutMs} ms` : aborted ? 'aborted' : describe(cause);
    throw new NetworkError(`${init.method} ${redact(url)} failed: ${reason}`, init.method, redact(url), {
      cause,
      timedOut,
    });
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    const code = inner && typeof inner === 'object' && 'code' in inner ? ` (${String(inner.code)})` : '';
    const innerMessage = inner instanceof Error ? `: ${inner.message}` : '';
    return `${cause.message}${innerMessage}${code}`;
  }
  return String(cause);
}

/** URLs in errors keep origin and path only: a query string could carry a customer's search term. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

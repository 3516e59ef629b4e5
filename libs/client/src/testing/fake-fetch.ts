/** Test doubles for the SDK's unit tests: a scripted `fetch` and a settable clock. */
import type { Clock } from '../clock';
import type { FetchLike } from '../transport';

export interface RecordedRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly signal: AbortSignal | undefined;
}

export type Route = (request: RecordedRequest) => Response | Promise<Response>;

/** A fetch that records every request and answers with `route`. */
export function fakeFetch(route: Route): FetchLike & { requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const fn = async (input: string, init: RequestInit) => {
    const request: RecordedRequest = {
      url: new URL(input),
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : undefined,
      signal: init.signal ?? undefined,
    };
    requests.push(request);
    return route(request);
  };
  return Object.assign(fn, { requests });
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function problem(status: number, detail: string, errors?: { field: string; message: string }[]): Response {
  return new Response(
    JSON.stringify({ type: 'about:blank', title: 'Bad Request', status, detail, ...(errors ? { errors } : {}) }),
    {
      status,
      headers: { 'content-type': 'application/problem+json; charset=utf-8' },
    },
  );
}

export class FakeClock implements Clock {
  constructor(public ms = Date.UTC(2026, 10, 22, 10, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** A promise with its resolver, to hold a fake response until the test releases it. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

import { ApiError, NetworkError, type Problem } from './errors';
import type { TokenManager } from './token-manager';
import { parseRetryAfter } from './token-manager';
import { type FetchLike, send } from './transport';

/** Per-call options every operation accepts. */
export interface RequestOptions {
  /** Cancels the call (the SDK's own timeout still applies). */
  readonly signal?: AbortSignal;
  /** Overrides the client's timeout for this call. */
  readonly timeoutMs?: number;
  /** Extra headers, e.g. `x-request-id` for correlation. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of a POST: replay-safe retries (CONTRACT.md §3: the first answer is replayed for 24 h). */
export interface CreateOptions extends RequestOptions {
  readonly idempotencyKey?: string;
}

/** Options of a write to an existing resource: optimistic concurrency (412 on mismatch). */
export interface WriteOptions extends RequestOptions {
  /** The `version` (or ETag) you read; the write fails with 412 if the resource changed since. */
  readonly ifMatch?: number | string;
}

/** Options of an action (POST on an existing resource): both. */
export interface ActionOptions extends WriteOptions {
  readonly idempotencyKey?: string;
}

export type Query = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path under the API root, e.g. `/entities/{id}`; ids are encoded by the caller. */
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly options?: RequestOptions & { idempotencyKey?: string; ifMatch?: number | string };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

/**
 * Sends API calls with the bearer token of a TokenManager. A 401 is retried exactly once, with a
 * fresh token: the token may have been revoked or expired early; a second 401 is an ApiError.
 */
export class ApiTransport {
  constructor(
    private readonly root: string,
    private readonly tokens: TokenManager,
    private readonly fetchImpl: FetchLike,
    private readonly timeoutMs: number,
    private readonly userAgent: string | undefined,
  ) {}

  /** JSON in, JSON out; `undefined` for 202/204 without a body. */
  async json<T>(request: ApiRequest): Promise<T> {
    const response = await this.raw(request, 'application/json');
    if (response.body.length === 0) return undefined as T;
    try {
      return JSON.parse(response.body.toString('utf8')) as T;
    } catch {
      throw new ApiError(problemOf(response.status, 'The service answered with a body that is not JSON'), {
        method: request.method,
        path: request.path,
      });
    }
  }

  /** The answer's bytes and headers, for an ok status; an ApiError otherwise. */
  async raw(request: ApiRequest, accept = '*/*'): Promise<RawResponse> {
    const url = this.url(request.path, request.query);
    const headers: Record<string, string> = { accept, ...request.options?.headers };
    if (this.userAgent) headers['user-agent'] = this.userAgent;
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    const { idempotencyKey, ifMatch } = request.options ?? {};
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (ifMatch !== undefined) headers['if-match'] = entityTag(ifMatch);

    let token = await this.tokens.getToken();
    let response = await this.send(request, url, headers, body, token);
    if (response.status === 401) {
      await response.arrayBuffer().catch(() => undefined);
      this.tokens.invalidate(token);
      token = await this.tokens.getToken();
      response = await this.send(request, url, headers, body, token);
    }
    const bytes = Buffer.from(await readBody(response, request));
    if (!response.ok) {
      throw new ApiError(problemFrom(response, bytes), {
        method: request.method,
        path: request.path,
        retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
        requestId: response.headers.get('x-request-id'),
      });
    }
    return { status: response.status, headers: response.headers, body: bytes };
  }

  private send(
    request: ApiRequest,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    token: string,
  ) {
    return send(
      this.fetchImpl,
      url,
      { method: request.method, headers: { ...headers, authorization: `Bearer ${token}` }, body },
      request.options?.timeoutMs ?? this.timeoutMs,
      request.options?.signal,
    );
  }

  private url(path: string, query: Query | undefined): string {
    const url = new URL(this.root + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }
}

async function readBody(response: Response, request: ApiRequest): Promise<ArrayBuffer> {
  try {
    return await response.arrayBuffer();
  } catch (cause) {
    throw new NetworkError(
      `${request.method} ${request.path}: the answer's body could not be read`,
      request.method,
      request.path,
      { cause },
    );
  }
}

/** `3` → `"3"`; a tag already quoted (or weak) is sent as given. */
export function entityTag(value: number | string): string {
  if (typeof value === 'number') return `"${value}"`;
  return /^(W\/)?".*"$/.test(value) || value === '*' ? value : `"${value}"`;
}

function problemFrom(response: Response, bytes: Buffer): Problem {
  const contentType = response.headers.get('content-type') ?? '';
  if (/json/i.test(contentType)) {
    try {
      const parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const { errors, ...body } = parsed;
        return {
          ...body,
          type: typeof body.type === 'string' ? body.type : 'about:blank',
          title: typeof body.title === 'string' ? body.title : response.statusText || `HTTP ${response.status}`,
          status: typeof body.status === 'number' ? body.status : response.status,
          detail:
            typeof body.detail === 'string'
              ? body.detail
              : typeof body.error_description === 'string'
                ? body.error_description
                : '',
          ...(Array.isArray(errors) ? { errors: errors.filter(isFieldError) } : {}),
        };
      }
    } catch {
      // fall through: not JSON after all
    }
  }
  return problemOf(
    response.status,
    `The service answered ${response.status} without a problem+json body`,
    response.statusText,
  );
}

function problemOf(status: number, detail: string, title?: string): Problem {
  return { type: 'about:blank', title: title || `HTTP ${status}`, status, detail };
}

function isFieldError(value: unknown): value is { field: string; message: string } {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as { field?: unknown }).field === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

import { type Clock, systemClock } from './clock';
import { NetworkError, OAuthError } from './errors';
import { type FetchLike, send } from './transport';

export interface TokenManagerOptions {
  /** The token endpoint, e.g. `https://api.example.com/o/token/`. */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Narrow the grant, e.g. `"read"`; default: everything the client is allowed. */
  readonly scope?: string;
  /** Refresh this many seconds before `expires_in` runs out (default 60). */
  readonly refreshMarginSeconds?: number;
  readonly fetch?: FetchLike;
  readonly clock?: Clock;
  /** Per-request timeout of the token call (default 30 s). */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
}

/** What the token endpoint granted (RFC 6749 §5.1), with the absolute times the manager uses. */
export interface AccessToken {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly scope: string | null;
  readonly expiresInSeconds: number;
  /** Clock time (ms) the token expires, counted from when the request was sent (conservative). */
  readonly expiresAt: number;
  /** Clock time (ms) from which the manager fetches a new one. */
  readonly refreshAt: number;
}

export const DEFAULT_REFRESH_MARGIN_SECONDS = 60;

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) with a cached token:
 *
 * - the token is fetched on first use and reused until `refreshMarginSeconds` (60 s) before it
 *   expires (a token that lives no longer than the margin is refreshed at half its life);
 * - concurrent callers share one token request (single flight): a burst of calls at expiry
 *   makes exactly one request to the token endpoint;
 * - if that early refresh fails, the cached token is used until it actually expires;
 * - `invalidate(token)` after a 401 drops that token only, so many calls failing with the same
 *   stale token still cause one refresh;
 * - the client is authenticated with HTTP Basic, id and secret form-urlencoded first
 *   (RFC 6749 §2.3.1).
 *
 * The secret and the tokens live in private fields: they are not enumerable, not shown by
 * `console.log`/`util.inspect`, not in any error message, and the SDK logs nothing.
 */
export class TokenManager {
  readonly #clientId: string;
  readonly #clientSecret: string;
  readonly #tokenUrl: string;
  readonly #scope: string | undefined;
  readonly #margin: number;
  readonly #fetch: FetchLike;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #userAgent: string | undefined;
  #current: AccessToken | null = null;
  #inflight: Promise<AccessToken> | null = null;
  #requests = 0;

  constructor(options: TokenManagerOptions) {
    if (!options.clientId || !options.clientSecret) throw new TypeError('clientId and clientSecret are required');
    this.#tokenUrl = new URL(options.tokenUrl).toString();
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.#scope = options.scope;
    this.#margin = (options.refreshMarginSeconds ?? DEFAULT_REFRESH_MARGIN_SECONDS) * 1000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#clock = options.clock ?? systemClock;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#userAgent = options.userAgent;
  }

  get clientId(): string {
    return this.#clientId;
  }

  /** How many token requests this manager has sent (observability and tests). */
  get tokenRequests(): number {
    return this.#requests;
  }

  /** A bearer token that is not within the refresh margin of its expiry, fetching one if needed. */
  async getToken(): Promise<string> {
    const current = this.#current;
    if (current && this.#clock.now() < current.refreshAt) return current.accessToken;
    try {
      return (await this.refresh()).accessToken;
    } catch (err) {
      // Refreshing early is a precaution: while the cached token has not expired, a failed
      // refresh (token endpoint down) does not fail the call; the next call tries again.
      const still = this.#current;
      if (still && this.#clock.now() < still.expiresAt) return still.accessToken;
      throw err;
    }
  }

  /** The cached grant (null before the first call or after `invalidate`). */
  peek(): AccessToken | null {
    return this.#current;
  }

  /** Fetches a new token now; joins a refresh already under way instead of starting another. */
  refresh(): Promise<AccessToken> {
    if (!this.#inflight) {
      this.#inflight = this.#request().finally(() => {
        this.#inflight = null;
      });
    }
    return this.#inflight;
  }

  /**
   * The service refused `token` (401): forget it so the next `getToken()` fetches a new one.
   * A token other than the cached one (already replaced by a concurrent refresh) is ignored.
   */
  invalidate(token?: string): void {
    if (token === undefined || this.#current?.accessToken === token) this.#current = null;
  }

  /** Revokes the cached token at `{auth_url}/o/revoke_token/` (RFC 7009) and forgets it. */
  async revoke(): Promise<void> {
    const current = this.#current;
    this.#current = null;
    if (!current) return;
    const url = new URL('../revoke_token/', this.#tokenUrl).toString();
    const response = await this.#post(url, { token: current.accessToken, token_type_hint: 'access_token' });
    if (!response.ok) throw await oauthError(response);
    await response.arrayBuffer().catch(() => undefined);
  }

  async #request(): Promise<AccessToken> {
    const sentAt = this.#clock.now();
    const form: Record<string, string> = { grant_type: 'client_credentials' };
    if (this.#scope !== undefined) form.scope = this.#scope;
    this.#requests += 1;
    const response = await this.#post(this.#tokenUrl, form);
    if (!response.ok) throw await oauthError(response);
    let body: Record<string, unknown>;
    try {
      body = (await response.json()) as Record<string, unknown>;
    } catch (cause) {
      throw new NetworkError('The token endpoint answered 200 without a JSON body', 'POST', this.#tokenUrl, { cause });
    }
    const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn, scope } = body;
    if (
      typeof accessToken !== 'string' ||
      accessToken.length === 0 ||
      typeof tokenType !== 'string' ||
      tokenType.toLowerCase() !== 'bearer'
    ) {
      throw new OAuthError(
        response.status,
        'invalid_response',
        'The token endpoint did not return a Bearer access_token',
      );
    }
    // RFC 6749 makes expires_in optional; without it, assume the contract's default of one hour.
    const lifetime = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600;
    const lifetimeMs = lifetime * 1000;
    // A lifetime shorter than the margin would mean refreshing on every call: use half of it then.
    const margin = lifetimeMs > this.#margin ? this.#margin : lifetimeMs / 2;
    const token: AccessToken = {
      accessToken,
      tokenType: 'Bearer',
      scope: typeof scope === 'string' ? scope : null,
      expiresInSeconds: lifetime,
      expiresAt: sentAt + lifetimeMs,
      refreshAt: sentAt + lifetimeMs - margin,
    };
    this.#current = token;
    return token;
  }

  #post(url: string, form: Record<string, string>): Promise<Response> {
    const basic = Buffer.from(`${formEncode(this.#clientId)}:${formEncode(this.#clientSecret)}`).toString('base64');
    const headers: Record<string, string> = {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (this.#userAgent) headers['user-agent'] = this.#userAgent;
    return send(
      this.#fetch,
      url,
      { method: 'POST', headers, body: new URLSearchParams(form).toString() },
      this.#timeoutMs,
    );
  }

  /** Never show credentials when the manager itself is logged. */
  toJSON(): Record<string, unknown> {
    return { clientId: this.#clientId, tokenUrl: this.#tokenUrl, hasToken: this.#current !== null };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenManager { clientId: '${this.#clientId}', tokenUrl: '${this.#tokenUrl}' }`;
  }
}

/** application/x-www-form-urlencoded of one value (spaces as `+`), as §2.3.1 asks before Basic. */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

async function oauthError(response: Response): Promise<OAuthError> {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
    const { error, error_description: description } = body as { error: string; error_description?: unknown };
    return new OAuthError(response.status, error, typeof description === 'string' ? description : null, retryAfter);
  }
  return new OAuthError(
    response.status,
    'invalid_response',
    `The token endpoint answered ${response.status} without an OAuth error body`,
    retryAfter,
  );
}

export function parseRetryAfter(value: string | null): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

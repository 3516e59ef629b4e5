import type { Principal } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { sha256 } from '../crypto/secrets';
import { AuthQueries, tokenLiveUntil } from '../read-model/auth.queries';

interface Verdict {
  readonly principal: Principal;
  /** Until when the token works (epoch ms; its expiry, or its previous secret's): the verdict holds no longer. */
  readonly expiresAt: number;
}

/**
 * Looks a token's SHA-256 up in `oauth_tokens` (with its client's status and secret generation).
 * What it found for a request's Authorization header is kept with the cached token rows, so the
 * next request with the same header skips passport's per-request machinery until a token or
 * client event (revocation, rotation) clears the cache or the token expires.
 */
@Injectable()
export class BearerTokenVerifier {
  constructor(private readonly queries: AuthQueries) {}

  /** The principal, or false for an unknown, expired, revoked or superseded token; `header` is the one it came in. */
  verify(token: string, header?: string): Principal | false {
    const row = this.queries.liveToken(sha256(token));
    const liveUntil = row ? tokenLiveUntil(row) : 0;
    if (!row || Date.now() >= liveUntil) return false;
    // Shared by every request with this header, so it cannot change under one of them.
    const principal: Principal = Object.freeze({
      kind: row.client_kind === 'operator' ? 'operator' : 'client',
      accountId: row.account_id,
      subjectId: row.client_id,
      scopes: Object.freeze(row.scopes.split(' ').filter(Boolean)),
    });
    // Same tick as the row's read: no projection can clear the cache in between.
    if (header !== undefined) this.queries.rememberVerdict(verdictKey(header), { principal, expiresAt: liveUntil });
    return principal;
  }

  /** What `verify` found for this very Authorization header, while it still holds; else undefined. */
  recall(header: string): Principal | undefined {
    const verdict = this.queries.recallVerdict<Verdict>(verdictKey(header));
    return verdict !== undefined && Date.now() < verdict.expiresAt ? verdict.principal : undefined;
  }
}

/** Hashed: no bearer token is kept in memory as it was sent. */
function verdictKey(header: string): string {
  return sha256(header);
}

const VERIFIER = Symbol('auth.bearerVerifier');

/** The guard hands its app's verifier to the strategy through the request. */
export function attachVerifier(request: object, verifier: BearerTokenVerifier): void {
  (request as { [VERIFIER]?: BearerTokenVerifier })[VERIFIER] = verifier;
}

/**
 * passport-http-bearer extracts the token from `Authorization: Bearer …`. Passport keeps
 * strategies in one process-wide registry, so the strategy holds no state of its own: it
 * verifies with the verifier of the app handling the request (two apps in one process, as in
 * the tests, each check their own tokens).
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor() {
    super({ passReqToCallback: true });
  }

  validate(request: { headers?: Record<string, unknown> }, token: string): Principal | false {
    const verifier = (request as { [VERIFIER]?: BearerTokenVerifier })[VERIFIER];
    // The verdict is kept for the header only when the token came from it.
    const header = request.headers?.authorization;
    return verifier
      ? verifier.verify(token, typeof header === 'string' && header.endsWith(token) ? header : undefined)
      : false;
  }
}

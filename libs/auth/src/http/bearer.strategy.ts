import type { Principal } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { sha256 } from '../crypto/secrets';
import { AuthQueries, isTokenLive } from '../read-model/auth.queries';

/** Looks a token's SHA-256 up in `oauth_tokens` (with its client's status and secret generation). */
@Injectable()
export class BearerTokenVerifier {
  constructor(private readonly queries: AuthQueries) {}

  /** The principal, or false for an unknown, expired, revoked or superseded token. */
  verify(token: string): Principal | false {
    const row = this.queries.liveToken(sha256(token));
    if (!row || !isTokenLive(row, Date.now())) return false;
    return {
      kind: row.client_kind === 'operator' ? 'operator' : 'client',
      accountId: row.account_id,
      subjectId: row.client_id,
      scopes: row.scopes.split(' ').filter(Boolean),
    };
  }
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

  validate(request: object, token: string): Principal | false {
    const verifier = (request as { [VERIFIER]?: BearerTokenVerifier })[VERIFIER];
    return verifier ? verifier.verify(token) : false;
  }
}

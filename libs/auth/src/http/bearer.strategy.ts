import type { Principal } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { sha256 } from '../crypto/secrets';
import { AuthQueries, isTokenLive } from '../read-model/auth.queries';

/**
 * passport-http-bearer extracts the token from `Authorization: Bearer …`; `validate` looks its
 * SHA-256 up in `oauth_tokens` (with its client's status and secret generation) and returns the
 * principal, or false for an unknown, expired, revoked or superseded token.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly queries: AuthQueries) {
    super();
  }

  validate(token: string): Principal | false {
    const row = this.queries.token(sha256(token));
    if (!row || !isTokenLive(row, Date.now())) return false;
    return {
      kind: row.client_kind === 'operator' ? 'operator' : 'client',
      accountId: row.account_id,
      subjectId: row.client_id,
      scopes: row.scopes.split(' ').filter(Boolean),
    };
  }
}

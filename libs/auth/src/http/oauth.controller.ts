import { APP_CONFIG, type AppConfig, ReadYourWrites, type CommandContext } from '@filing/platform';
import { Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { IssueTokenCommand, RevokeTokenCommand } from '../commands/issue-token';
import { sha256 } from '../crypto/secrets';
import { AuthQueries, isTokenLive } from '../read-model/auth.queries';
import { formatScope, grantScopes } from '../scopes';
import { type AuthenticatedClient, ClientAuthenticator } from './client-authenticator';
import { DuplicateParameterError, FormFields, oauthError } from './oauth-error';

/**
 * The OAuth 2.0 endpoints (CONTRACT.md §1): client-credentials tokens (RFC 6749 §4.4),
 * revocation (RFC 7009) and introspection (RFC 7662). Every answer carries `Cache-Control:
 * no-store` and `Pragma: no-cache`, and a body that is not a form is refused before it is
 * parsed (both in OAuthEndpointHooks). The request body is read raw: it is a form, not a DTO.
 */
@Controller('o')
export class OAuthController {
  constructor(
    private readonly commandBus: CommandBus,
    private readonly authenticator: ClientAuthenticator,
    private readonly queries: AuthQueries,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('token')
  @HttpCode(200)
  async token(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const form = new FormFields(request.body);
    const grantType = field(form, 'grant_type', reply);
    if (grantType === undefined) throw oauthError(reply, 400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') {
      throw oauthError(reply, 400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported');
    }
    const client = await this.authenticator.authenticate(request, reply);
    const grant = grantScopes(client.scopes, field(form, 'scope', reply));
    if (!grant.ok) throw oauthError(reply, 400, 'invalid_scope', grant.reason);

    const ttlSeconds = this.config.tokenTtlSeconds;
    const issued = await this.commandBus.execute(
      new IssueTokenCommand(
        {
          clientId: client.clientId,
          accountId: client.accountId,
          scopes: grant.scopes,
          secretGeneration: client.secretGeneration,
          ttlSeconds,
          // A token of a secret in its overlap ends with that secret: expires_in says so.
          notAfter: client.secretExpiresAt,
        },
        contextOf(client, request),
      ),
    );
    // The token must work on the very next call: wait until the guard's read model has it.
    await this.readYourWrites.await(issued.position);
    return {
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.floor((issued.expiresAt.getTime() - issued.issuedAt.getTime()) / 1000)),
      scope: formatScope(grant.scopes),
    };
  }

  /** RFC 7009: 200 whether or not the token was known, live, or the caller's (only its own are revoked). */
  @Post('revoke_token')
  @HttpCode(200)
  async revoke(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const client = await this.authenticator.authenticate(request, reply);
    const token = field(new FormFields(request.body), 'token', reply);
    if (token === undefined) throw oauthError(reply, 400, 'invalid_request', 'token is required');
    const tokenHash = sha256(token);
    const row = this.queries.token(tokenHash);
    if (!row || row.client_id !== client.clientId || row.revoked !== 0) return;
    const { position } = await this.commandBus.execute(
      new RevokeTokenCommand(
        { clientId: client.clientId, accountId: client.accountId, tokenHash },
        contextOf(client, request),
      ),
    );
    await this.readYourWrites.await(position);
  }

  /** RFC 7662: `{active:false}` for an unknown, expired, revoked or another client's token. */
  @Post('introspect')
  @HttpCode(200)
  async introspect(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const client = await this.authenticator.authenticate(request, reply);
    const token = field(new FormFields(request.body), 'token', reply);
    if (token === undefined) throw oauthError(reply, 400, 'invalid_request', 'token is required');
    const row = this.queries.token(sha256(token));
    if (!row || row.client_id !== client.clientId || !isTokenLive(row, Date.now())) return { active: false };
    return {
      active: true,
      scope: row.scopes,
      client_id: row.client_id,
      token_type: 'Bearer',
      exp: Math.floor(row.expires_at / 1000),
      iat: Math.floor(row.issued_at / 1000),
    };
  }
}

function field(form: FormFields, name: string, reply: FastifyReply): string | undefined {
  try {
    return form.get(name);
  } catch (err) {
    if (err instanceof DuplicateParameterError) throw oauthError(reply, 400, 'invalid_request', err.message);
    throw err;
  }
}

function contextOf(client: AuthenticatedClient, request: FastifyRequest): CommandContext {
  const requestId = request.headers['x-request-id'];
  return {
    account_id: client.accountId,
    actor: `${client.kind === 'operator' ? 'operator' : 'client'}:${client.clientId}`,
    correlation_id:
      typeof requestId === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(requestId) ? requestId : randomUUID(),
    causation_id: null,
  };
}

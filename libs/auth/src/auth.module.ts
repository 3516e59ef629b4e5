import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, type AppConfig } from '@filing/platform';
import { CreateAccountHandler } from './commands/create-account';
import { CreateClientHandler } from './commands/create-client';
import { CreateUserHandler } from './commands/create-user';
import { IssueTokenHandler, RevokeTokenHandler } from './commands/issue-token';
import { RevokeClientHandler } from './commands/revoke-client';
import { ExpirePreviousSecretHandler, RotateClientSecretHandler } from './commands/rotate-client-secret';
import { ApiAccessGuard } from './http/api-access.guard';
import { ApiRateLimitGuard } from './http/api-rate-limit.guard';
import { SlidingWindowStorage } from './http/sliding-window.storage';
import { BearerStrategy, BearerTokenVerifier } from './http/bearer.strategy';
import { ClientAuthenticator } from './http/client-authenticator';
import { FailedAuthThrottle } from './http/failed-auth-throttle';
import { OAuthEndpointHooks } from './http/oauth-endpoint.hooks';
import { OAuthController } from './http/oauth.controller';
import { DiscoveryController } from './http/discovery.controller';
import { VerifyUserPasswordHandler } from './queries/verify-user-password';
import { AccountClientsHandler } from './queries/account-clients';
import { AccountsController, ClientsController, UsersController } from './http/operator.controllers';
import { AccountsProjection } from './read-model/accounts.projection';
import { AuthQueries } from './read-model/auth.queries';
import { ClientsProjection } from './read-model/clients.projection';
import { TokensProjection } from './read-model/tokens.projection';
import { UsersProjection } from './read-model/users.projection';

const commandHandlers = [
  CreateAccountHandler,
  CreateClientHandler,
  RotateClientSecretHandler,
  ExpirePreviousSecretHandler,
  RevokeClientHandler,
  CreateUserHandler,
  IssueTokenHandler,
  RevokeTokenHandler,
];

const projections = [AccountsProjection, ClientsProjection, TokensProjection, UsersProjection];

/**
 * The auth commands (on the app's CommandBus; needs the EventStoreModule and
 * CqrsModule.forRoot() from the root module) and the auth projections (found by the
 * ProjectionsModule, for `replay` and `audit`). The CLI imports this: no HTTP, and nothing here
 * waits on the projection runner, so the CLI never needs one running beside the service's.
 */
@Module({ providers: [...commandHandlers, ...projections] })
export class AuthCoreModule {}

const http = [
  { provide: FailedAuthThrottle, useFactory: () => new FailedAuthThrottle() },
  ClientAuthenticator,
  OAuthEndpointHooks,
  BearerTokenVerifier,
  BearerStrategy,
  // Global: every route of every module goes through it; it decides by path (see the guard).
  { provide: APP_GUARD, useClass: ApiAccessGuard },
  // Global guards run in the order they are provided: the limit counts authenticated requests only.
  { provide: APP_GUARD, useClass: ApiRateLimitGuard },
];

/** The external API's per-account limit (API_RATE_LIMIT); `off` skips it in ApiRateLimitGuard. */
const rateLimit = ThrottlerModule.forRootAsync({
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => ({
    throttlers: [{ limit: config.apiRateLimit?.limit ?? 1, ttl: config.apiRateLimit?.windowMs ?? 1_000 }],
    // The library's in-memory storage filters every hit of the window on each request.
    storage: new SlidingWindowStorage(),
  }),
});

/**
 * Accounts, API clients, users; the OAuth 2.0 token, revocation and introspection endpoints;
 * the bearer guard of `/external-api/v1` and `/internal-api/v1`; the operator API.
 * Needs ProjectionsModule (read models, read-your-writes) and APP_CONFIG from the root module.
 */
@Module({
  imports: [AuthCoreModule, rateLimit],
  controllers: [OAuthController, DiscoveryController, AccountsController, ClientsController, UsersController],
  providers: [AuthQueries, VerifyUserPasswordHandler, AccountClientsHandler, ...http],
  exports: [FailedAuthThrottle],
})
export class AuthModule {}

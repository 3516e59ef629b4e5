import { APP_CONFIG, type AppConfig } from '@filing/platform';
import { Controller, Get, Header, Inject, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ALLOWED_SCOPES } from '../scopes';

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

/**
 * RFC 8414 authorization server metadata, so client libraries (oauth4webapi, openid-client)
 * find the token, revocation and introspection endpoints themselves. Every URL is absolute, from
 * PUBLIC_URL; without it, `http(s)://localhost:<the port the request came in on>`: never from the
 * Host header, which a client behind a proxy may forge. The issuer is that origin itself, the
 * URL the metadata is fetched from minus the well-known suffix (RFC 8414 §3.3).
 */
@Controller('.well-known')
export class DiscoveryController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('oauth-authorization-server')
  @Header('cache-control', 'public, max-age=300')
  metadata(@Req() request: FastifyRequest) {
    const issuer =
      this.config.publicUrl ?? `${this.config.tls ? 'https' : 'http'}://localhost:${request.socket.localPort}`;
    return {
      issuer,
      token_endpoint: `${issuer}/o/token/`,
      token_endpoint_auth_methods_supported: AUTH_METHODS,
      revocation_endpoint: `${issuer}/o/revoke_token/`,
      revocation_endpoint_auth_methods_supported: AUTH_METHODS,
      introspection_endpoint: `${issuer}/o/introspect/`,
      introspection_endpoint_auth_methods_supported: AUTH_METHODS,
      grant_types_supported: ['client_credentials'],
      // Required by §2; no authorization endpoint, so no response type.
      response_types_supported: [],
      scopes_supported: [...new Set(Object.values(ALLOWED_SCOPES).flat())],
      service_documentation: `${issuer}/docs`,
    };
  }
}

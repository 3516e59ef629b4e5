import { type Principal, setPrincipal } from '@filing/platform';
import { type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { attachVerifier, BearerTokenVerifier } from './bearer.strategy';
import { oauthError } from './oauth-error';

/** Which bearer realm a path belongs to and the scope a method needs there; null for public paths. */
export function requirementOf(path: string, method: string): { realm: string; scope: string } | null {
  if (path.startsWith('/external-api/v1/')) {
    if (path === '/external-api/v1/openapi.json') return null;
    return { realm: 'external-api', scope: method === 'GET' || method === 'HEAD' ? 'read' : 'write' };
  }
  if (path.startsWith('/internal-api/v1/')) return { realm: 'internal-api', scope: 'operator' };
  return null;
}

/**
 * The global guard (APP_GUARD): by path, `/external-api/v1/*` needs a bearer token with `read`
 * (GET/HEAD) or `write` (anything else), `/internal-api/v1/*` one with `operator`; other paths
 * are public. It decides on the matched route's pattern, so no spelling of a URL slips past it.
 *
 * Challenges follow RFC 6750 as CONTRACT.md §1 spells them; Nest's AuthGuard would drop
 * `WWW-Authenticate`, so failures are thrown here with the header set on the reply. A token in
 * the query string or the body (which passport-http-bearer would accept) is a 400.
 */
@Injectable()
export class ApiAccessGuard extends AuthGuard('bearer') {
  constructor(private readonly verifier: BearerTokenVerifier) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const requirement = requirementOf(routePath(request), request.method);
    if (!requirement) return true;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const { realm, scope } = requirement;

    if (hasField(request.query, 'access_token') || hasField(request.body, 'access_token')) {
      throw oauthError(reply, 400, 'invalid_request', 'Send the access token in the Authorization header only', {
        'www-authenticate': `Bearer realm="${realm}", error="invalid_request"`,
      });
    }
    // A header passport already accepted, with nothing changed since, skips passport's machinery.
    const authorization = request.headers.authorization;
    const recalled = authorization === undefined ? undefined : this.verifier.recall(authorization);
    if (recalled) {
      (request as FastifyRequest & { user?: Principal }).user = recalled;
    } else {
      attachVerifier(request, this.verifier);
      await super.canActivate(context);
    }
    const principal = (request as FastifyRequest & { user?: Principal }).user as Principal;
    if (!principal.scopes.includes(scope)) {
      throw oauthError(reply, 403, 'insufficient_scope', `This request needs a token with the ${scope} scope`, {
        'www-authenticate': `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"`,
      });
    }
    setPrincipal(request, principal);
    return true;
  }

  // `err` is what BearerStrategy.validate threw (an Error), or null when it answered.
  override handleRequest<T = Principal>(
    err: Error | null,
    user: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (err) throw err;
    if (user) return user;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const realm = requirementOf(routePath(request), request.method)?.realm ?? 'external-api';
    if (request.headers.authorization === undefined) {
      // RFC 6750 §3.1: no credentials at all, no error code in the challenge.
      reply.header('www-authenticate', `Bearer realm="${realm}"`);
      throw new UnauthorizedException('An access token is required: Authorization: Bearer <token>');
    }
    throw oauthError(reply, 401, 'invalid_token', 'The access token is malformed, unknown, expired or revoked', {
      'www-authenticate': `Bearer realm="${realm}", error="invalid_token"`,
    });
  }
}

/** The matched route's pattern (so no spelling of a URL slips past), else the path. */
export function routePath(request: FastifyRequest): string {
  return request.routeOptions?.url ?? request.url.split('?', 1)[0];
}

function hasField(container: unknown, name: string): boolean {
  return typeof container === 'object' && container !== null && Object.hasOwn(container, name);
}

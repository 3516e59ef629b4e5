import { type CanActivate, type ExecutionContext, Injectable, UnsupportedMediaTypeException } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../errors/domain-errors';

export const JSON_API_PREFIXES = ['/external-api/v1/', '/internal-api/v1/'] as const;

/**
 * The APIs take JSON only (CONTRACT.md §2: 415). Fastify still parses form bodies for the token
 * endpoint, so a form body sent to an API route is refused here rather than validated as a DTO.
 * A request without a body is left alone, whatever its Content-Type (e.g. `POST /orders/{id}/cancel`, a GET).
 * It also refuses, by name, query parameters and body fields sent to a route that declares none.
 *
 * A guard, bound to every route after all other guards (`RouteEnhancers`): it runs where an
 * interceptor would (after authentication and the rate limit, before Idempotency-Key and the
 * pipes), without the Observable pipeline an interceptor puts on every request.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!JSON_API_PREFIXES.some((p) => request.url.startsWith(p))) return true;
    const type = request.headers['content-type'];
    if (type !== undefined && hasBody(request) && !isJson(type)) {
      throw new UnsupportedMediaTypeException(`Unsupported media type ${type.split(';')[0]}; send application/json`);
    }
    // A route that declares no @Query() (a single resource, the settings, the catalog) takes no
    // query parameters: they are refused by name, as unknown ones are on collections.
    const query = request.query as Record<string, unknown> | undefined;
    if (query && Object.keys(query).length > 0 && !declares(context, RouteParamtypes.QUERY)) {
      throw new ValidationError(
        Object.keys(query).map((field) => ({ field, message: `${field} is not a parameter of this operation` })),
      );
    }
    // An action that declares no @Body() (enable, complete, redeliver…) takes none: fields sent
    // to it are refused by name, as unknown fields are everywhere else; `{}` is fine.
    const body: unknown = request.body;
    if (body !== undefined && body !== null && !declares(context, RouteParamtypes.BODY)) {
      if (typeof body !== 'object' || Array.isArray(body))
        throw ValidationError.field('body', 'This operation takes no body');
      const fields = Object.keys(body);
      if (fields.length > 0) {
        throw new ValidationError(
          fields.map((field) => ({ field, message: `${field} is not accepted: this operation takes no body` })),
        );
      }
    }
    return true;
  }
}

/** The kinds of parameter each handler declares, read once per class and handler (decorators do not change). */
const declared = new WeakMap<object, Map<string, ReadonlySet<string>>>();

/** Whether the route's handler has a parameter of this kind (`@Body()`, `@Query()`…). */
function declares(context: ExecutionContext, kind: RouteParamtypes): boolean {
  const owner = context.getClass();
  const handler = context.getHandler().name;
  let byHandler = declared.get(owner);
  if (!byHandler) declared.set(owner, (byHandler = new Map<string, ReadonlySet<string>>()));
  let kinds = byHandler.get(handler);
  if (!kinds) {
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, handler) ?? {}) as Record<string, unknown>;
    kinds = new Set(Object.keys(args).map((key) => key.split(':')[0]));
    byHandler.set(handler, kinds);
  }
  return kinds.has(String(kind));
}

function isJson(contentType: string): boolean {
  const media = contentType.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

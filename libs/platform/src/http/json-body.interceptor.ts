import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { ValidationError } from '../errors/domain-errors';

export const JSON_API_PREFIXES = ['/external-api/v1/', '/internal-api/v1/'] as const;

/**
 * The APIs take JSON only (CONTRACT.md §2: 415). Fastify still parses form bodies for the token
 * endpoint, so a form body sent to an API route is refused here rather than validated as a DTO.
 * A request without a body is left alone, whatever its Content-Type (e.g. `POST /orders/{id}/cancel`, a GET).
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const type = request.headers['content-type'];
    if (type !== undefined && hasBody(request) && JSON_API_PREFIXES.some((p) => request.url.startsWith(p)) && !isJson(type)) {
      throw new UnsupportedMediaTypeException(`Unsupported media type ${type.split(';')[0]}; send application/json`);
    }
    // An action that declares no @Body() (enable, complete, redeliver…) takes none: fields sent
    // to it are refused by name, as unknown fields are everywhere else; `{}` is fine.
    const body: unknown = request.body;
    if (body !== undefined && body !== null && !takesBody(context) && JSON_API_PREFIXES.some((p) => request.url.startsWith(p))) {
      if (typeof body !== 'object' || Array.isArray(body)) throw ValidationError.field('body', 'This operation takes no body');
      const fields = Object.keys(body);
      if (fields.length > 0) {
        throw new ValidationError(fields.map((field) => ({ field, message: `${field} is not accepted: this operation takes no body` })));
      }
    }
    return next.handle();
  }
}

function takesBody(context: ExecutionContext): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), context.getHandler().name) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => key.split(':')[0] === String(RouteParamtypes.BODY));
}

function isJson(contentType: string): boolean {
  const media = contentType.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

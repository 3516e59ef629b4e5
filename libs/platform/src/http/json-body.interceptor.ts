import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';

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
    return next.handle();
  }
}

function isJson(contentType: string): boolean {
  const media = contentType.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

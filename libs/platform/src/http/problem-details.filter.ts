import { extend } from '../domain/extend';
import { EventStoreUnavailableError, WrongExpectedVersionError } from '@filing/event-store';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import {
  ConflictError,
  type FieldError,
  NotFoundError,
  PreconditionFailedError,
  UnprocessableError,
  ValidationError,
} from '../errors/domain-errors';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/**
 * RFC 9457 body. `type` is always `about:blank`: the status names the kind of problem (400
 * validation, 404, 409 conflict, 412 If-Match, …), `title` is the status's standard phrase, as
 * RFC 9457 §4.2.1 asks, and `detail` says what happened in this case. Clients branch on `status`.
 */
export interface ProblemDetails {
  readonly type: 'about:blank';
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const OAUTH_ERROR_CODE = /^[a-z0-9_]+$/;

/**
 * The global exception filter (Fastify): every error becomes `application/problem+json`, except
 * OAuth endpoint errors. Convention: those are thrown as `new HttpException({ error:
 * 'invalid_client', error_description?: … }, status)` — a response object with an RFC 6749
 * error code in `error` and no `statusCode` (Nest's own bodies always have one) — and are sent
 * unchanged as `application/json`, with any headers (WWW-Authenticate, Cache-Control) already
 * set on the reply.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    if (reply.sent) {
      this.logger.error(`Error after the response was sent: ${describe(exception)}`, stackOf(exception));
      return;
    }

    const oauth = oauthError(exception);
    if (oauth) {
      reply.status(oauth.status).type('application/json; charset=utf-8').send(JSON.stringify(oauth.body));
      return;
    }

    const { problem, headers } = this.toProblem(exception, request);
    for (const [name, value] of Object.entries(headers ?? {})) reply.header(name, value);
    reply.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  private toProblem(
    exception: unknown,
    request: FastifyRequest,
  ): { problem: ProblemDetails; headers?: Record<string, string> } {
    if (exception instanceof ValidationError)
      return { problem: problemDetails(400, exception.message, exception.errors) };
    if (exception instanceof NotFoundError) return { problem: problemDetails(404, exception.message) };
    if (exception instanceof ConflictError) return { problem: problemDetails(409, exception.message) };
    if (exception instanceof PreconditionFailedError) return { problem: problemDetails(412, exception.message) };
    if (exception instanceof UnprocessableError) return { problem: problemDetails(422, exception.message) };
    if (exception instanceof WrongExpectedVersionError) {
      // Still conflicting after handleCommand's retries: heavy contention on one resource.
      return { problem: problemDetails(409, 'The resource was changed by concurrent requests; retry the request') };
    }
    if (exception instanceof EventStoreUnavailableError) {
      this.logger.error(`Event store unavailable: ${describe(exception)}`, stackOf(exception));
      return {
        problem: problemDetails(503, 'The service is temporarily unavailable; retry the request later'),
        headers: { 'retry-after': '5' },
      };
    }
    if (exception instanceof HttpException) return this.fromHttpException(exception, request);
    // The request broke off mid-body (the client went away, or sent a malformed chunk, which Node
    // answers 400 itself and closes): nobody to answer and nothing to fix, so no error log.
    if ((exception as NodeJS.ErrnoException).code === 'ECONNRESET' && request.raw.socket?.destroyed) {
      this.logger.debug(`Request aborted on ${request.method} ${request.url.split('?')[0]}: ${describe(exception)}`);
      return { problem: problemDetails(400, 'The request was aborted before its body arrived') };
    }

    // Anything else is a bug or an outage: log it whole, tell the client nothing about it.
    // The path only: a query string may carry credentials (e.g. a misplaced access_token).
    this.logger.error(
      `Unhandled error on ${request.method} ${request.url.split('?')[0]}: ${describe(exception)}`,
      stackOf(exception),
    );
    return { problem: problemDetails(500, 'An unexpected error occurred') };
  }

  private fromHttpException(
    exception: HttpException,
    request: FastifyRequest,
  ): { problem: ProblemDetails; headers?: Record<string, string> } {
    const status = exception.getStatus();
    // No route for this method: if the path exists for other methods, it is a 405 (RFC 9110
    // §15.5.6, with Allow). Fastify itself answers 404 for both.
    if (exception instanceof NotFoundException && request.is404) {
      const allowed = allowedMethods(request);
      if (allowed.length > 0) {
        return {
          problem: problemDetails(405, `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`),
          headers: { allow: allowed.join(', ') },
        };
      }
      return { problem: problemDetails(404, 'No such route') };
    }
    if (status >= 500) this.logger.error(`HTTP ${status}: ${describe(exception)}`, stackOf(exception));
    if (status === 500) return { problem: problemDetails(500, 'An unexpected error occurred') };
    return { problem: problemDetails(status, httpDetail(exception)) };
  }
}

/** An RFC 9457 body: `title` is the status's standard phrase, `detail` what happened. */
export function problemDetails(status: number, detail: string, errors?: readonly FieldError[]): ProblemDetails {
  const body: ProblemDetails = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  return errors ? extend(body, { errors }) : body;
}

function httpDetail(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.map(String).join('; ');
  return exception.message;
}

function oauthError(exception: unknown): { status: number; body: object } | null {
  if (!(exception instanceof HttpException)) return null;
  const body = exception.getResponse();
  if (typeof body !== 'object' || body === null || 'statusCode' in body) return null;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'string' && OAUTH_ERROR_CODE.test(error) ? { status: exception.getStatus(), body } : null;
}

/**
 * The methods of the routes matching this path; none when a route of the request's own method
 * matches (then the 404 came from inside it, e.g. a missing file under `/docs/`, and is a 404).
 */
function allowedMethods(request: FastifyRequest): string[] {
  const url = request.url.split('?')[0];
  const found = (method: string) => request.server.findRoute({ method, url }) !== null;
  if (found(request.method)) return [];
  return METHODS.filter((method) => method !== request.method && found(method));
}

function describe(exception: unknown): string {
  return exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception);
}

function stackOf(exception: unknown): string | undefined {
  return exception instanceof Error ? exception.stack : undefined;
}

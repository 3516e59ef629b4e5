import { EventStoreUnavailableError, WrongExpectedVersionError } from '@filing/event-store';
import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from '@filing/platform';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookies, SESSION_COOKIE } from './session/cookies';
import { CsrfRejected, SignInRequired } from './session/session.guard';
import { sendPage } from './settings-http';
import { errorPage } from './views/endpoint.page';

/**
 * The settings screen answers HTML, never problem+json: this filter (on its controllers, so it
 * runs instead of the global ProblemDetailsFilter) renders each error as a page. Without a
 * session a GET goes to the sign-in page; an account's missing or foreign resource is the same
 * 404 page either way.
 */
@Catch()
export class SettingsErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('SettingsScreen');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (reply.sent) return;
    if (exception instanceof SignInRequired) {
      const hadSession = readCookies(request).has(SESSION_COOKIE);
      reply
        .status(303)
        .header('location', hadSession ? '/settings/sign-in?expired=1' : '/settings/sign-in')
        .header('cache-control', 'no-store')
        .send();
      return;
    }
    const [status, title, message] = this.describe(exception, request);
    sendPage(reply, errorPage(status, title, message), status);
  }

  private describe(exception: unknown, request: FastifyRequest): [number, string, string] {
    if (exception instanceof CsrfRejected) return [403, 'Form refused', exception.message];
    if (exception instanceof NotFoundError || exception instanceof NotFoundException) {
      return [404, 'Not found', 'There is no such page or endpoint in your account.'];
    }
    if (exception instanceof ConflictError) return [409, 'Not possible now', exception.message];
    if (exception instanceof PreconditionFailedError || exception instanceof WrongExpectedVersionError) {
      return [
        409,
        'Changed meanwhile',
        'Someone changed this endpoint at the same time. Reload the page and try again.',
      ];
    }
    if (exception instanceof ValidationError) {
      return [400, 'Invalid input', exception.errors.map((e) => e.message).join(' ')];
    }
    if (exception instanceof EventStoreUnavailableError) {
      this.logger.error(`Event store unavailable: ${String(exception)}`);
      return [503, 'Temporarily unavailable', 'The service is temporarily unavailable. Try again in a moment.'];
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      return [exception.getStatus(), 'Request refused', exception.message];
    }
    // The path only: a query string could carry something private.
    this.logger.error(
      `Unhandled error on ${request.method} ${request.url.split('?')[0]}: ${exception instanceof Error ? exception.message : String(exception)}`,
      exception instanceof Error ? exception.stack : undefined,
    );
    return [500, 'Something went wrong', 'An unexpected error occurred. Nothing more was changed; try again.'];
  }
}

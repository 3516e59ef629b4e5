import { setPrincipal } from '@filing/platform';
import {
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { readCookies, SESSION_COOKIE, tokensEqual } from './cookies';
import { type SettingsSession, SettingsSessionStore } from './session-store';

/** No live session: the error filter answers with a redirect to the sign-in page. */
export class SignInRequired extends Error {
  override readonly name = 'SignInRequired';
}

/** Thrown when a form comes without this session's CSRF token (403). */
export class CsrfRejected extends ForbiddenException {
  constructor() {
    super('This form has expired or did not come from this site. Reload the page and try again.');
  }
}

export interface CurrentSession {
  readonly token: string;
  readonly session: SettingsSession;
}

const SESSION = Symbol('settingsSession');
type WithSession = FastifyRequest & { [SESSION]?: CurrentSession };

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The settings screen's guard: a live server-side session (else sign-in), and on every form
 * (any unsafe method) the session's synchronizer token in the `_csrf` field (else 403, nothing
 * done). The session's user becomes the request's Principal, so `@Ctx()` scopes every command
 * and query to the user's account, exactly as a bearer token does on the API.
 */
@Injectable()
export class SettingsSessionGuard implements CanActivate {
  constructor(private readonly sessions: SettingsSessionStore) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<WithSession>();
    const token = readCookies(request).get(SESSION_COOKIE);
    const session = await this.sessions.get(token);
    if (!token || !session) throw new SignInRequired();
    if (UNSAFE.has(request.method)) {
      const sent = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (!tokensEqual(sent, session.csrfToken)) throw new CsrfRejected();
    }
    request[SESSION] = { token, session };
    setPrincipal(request, { kind: 'user', accountId: session.accountId, subjectId: session.userId, scopes: [] });
    return true;
  }
}

/** `@Session() current: CurrentSession` on a route behind SettingsSessionGuard. */
export const Session = createParamDecorator((_: unknown, ctx: ExecutionContext): CurrentSession => {
  const current = ctx.switchToHttp().getRequest<WithSession>()[SESSION];
  if (!current) throw new SignInRequired();
  return current;
});

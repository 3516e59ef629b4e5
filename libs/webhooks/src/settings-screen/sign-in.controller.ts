import { FailedAuthThrottle, VerifyUserPasswordQuery } from '@filing/auth';
import {
  All,
  Body,
  Controller,
  Get,
  Inject,
  NotFoundException,
  Post,
  Query,
  Req,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearCookie, readCookies, SESSION_COOKIE, setCookie, SIGN_IN_CSRF_COOKIE } from './session/cookies';
import { CsrfRejected, type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { SettingsSessionStore } from './session/session-store';
import { SignInCsrf } from './session/sign-in-csrf';
import { SettingsErrorFilter } from './settings-errors.filter';
import { redirect, sendPage } from './settings-http';
import { PROFILE_URL } from './views/layout';
import { signInPage } from './views/sign-in.page';
import { SETTINGS_CSS } from './views/styles';

/** Failed sign-ins per email and per address (a separate brake from the token endpoint's). */
export const SIGN_IN_THROTTLE = Symbol('SIGN_IN_THROTTLE');
export const SIGN_IN_LIMITS = { windowMs: 15 * 60_000, perClient: 5, perAddress: 20, maxKeys: 100_000 } as const;

interface SignInForm {
  email?: unknown;
  password?: unknown;
  _csrf?: unknown;
}

/** Sign-in, sign-out and the stylesheet of the settings screen (server-rendered, no script). */
@Controller('settings')
@UseFilters(SettingsErrorFilter)
export class SignInController {
  constructor(
    private readonly queries: QueryBus,
    private readonly sessions: SettingsSessionStore,
    @Inject(SIGN_IN_THROTTLE) private readonly throttle: FailedAuthThrottle,
    private readonly csrf: SignInCsrf,
  ) {}

  @Get()
  async root(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    redirect(
      reply,
      (await this.sessions.get(readCookies(request).get(SESSION_COOKIE))) ? PROFILE_URL : '/settings/sign-in',
    );
  }

  @Get('assets/settings.css')
  css(@Res() reply: FastifyReply): void {
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(SETTINGS_CSS);
  }

  @Get('sign-in')
  async page(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('expired') expired?: string,
    @Query('signed_out') signedOut?: string,
  ): Promise<void> {
    if (await this.sessions.get(readCookies(request).get(SESSION_COOKIE))) return redirect(reply, PROFILE_URL);
    const notice = signedOut
      ? 'You are signed out.'
      : expired
        ? 'Your session has ended. Sign in again to continue.'
        : undefined;
    sendPage(reply, signInPage({ csrfToken: this.signInToken(request, reply), notice }));
  }

  @Post('sign-in')
  async signIn(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: SignInForm = {},
  ): Promise<void> {
    if (!this.csrf.verify(readCookies(request).get(SIGN_IN_CSRF_COOKIE), body._csrf)) throw new CsrfRejected();
    const email = typeof body.email === 'string' ? body.email.trim().toLowerCase() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const again = (status: number, error: string) =>
      sendPage(reply, signInPage({ csrfToken: this.signInToken(request, reply), email, error }), status);

    const wait = this.throttle.retryAfter(email || null, request.ip);
    if (wait !== null) {
      reply.header('retry-after', String(wait));
      return again(429, `Too many failed sign-in attempts. Try again in ${describeWait(wait)}.`);
    }
    const user = email && password ? await this.queries.execute(new VerifyUserPasswordQuery(email, password)) : null;
    if (!user) {
      this.throttle.recordFailure(email || null, request.ip);
      return again(401, 'The email or password is not correct.');
    }
    // A new session id at sign-in (no fixation); the sign-in token has done its job.
    await this.sessions.destroy(readCookies(request).get(SESSION_COOKIE));
    const { token } = await this.sessions.create(user);
    clearCookie(reply, request, SIGN_IN_CSRF_COOKIE);
    setCookie(reply, request, SESSION_COOKIE, token);
    redirect(reply, PROFILE_URL);
  }

  @Post('sign-out')
  @UseGuards(SettingsSessionGuard)
  async signOut(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Session() current: CurrentSession,
  ): Promise<void> {
    await this.sessions.destroy(current.token);
    clearCookie(reply, request, SESSION_COOKIE);
    redirect(reply, '/settings/sign-in?signed_out=1');
  }

  /** Any other path under /settings: the HTML 404 page, not the API's problem+json. */
  @All('*')
  notFound(): never {
    throw new NotFoundException();
  }

  /** The sign-in form's token: signed for the cookie's nonce, or for a new one set now. */
  private signInToken(request: FastifyRequest, reply: FastifyReply): string {
    let nonce = readCookies(request).get(SIGN_IN_CSRF_COOKIE);
    if (!SignInCsrf.isNonce(nonce)) {
      nonce = SignInCsrf.nonce();
      setCookie(reply, request, SIGN_IN_CSRF_COOKIE, nonce);
    }
    return this.csrf.field(nonce);
  }
}

function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

import { isUuid, NotFoundError } from '@filing/platform';
import type { FastifyReply } from 'fastify';
import type { CurrentSession } from './session/session.guard';

/**
 * Headers of every settings page: never cached (pages show account data and, at times, a
 * signing secret), never framed, no script at all, forms post only to this origin.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export function sendPage(reply: FastifyReply, page: string, status = 200): void {
  reply.status(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(page);
}

/** 303 See Other: after a form, the browser GETs the next page (no re-post on reload). */
export function redirect(reply: FastifyReply, location: string): void {
  reply.status(303).header('location', location).header('cache-control', 'no-store').send();
}

/** The signed-in user as every page's layout shows them. */
export function userOf(current: CurrentSession): { email: string; csrfToken: string } {
  return { email: current.session.email, csrfToken: current.session.csrfToken };
}

/** A malformed id names no endpoint of this account: the same 404 as a foreign one. */
export function checkId(id: string): string {
  if (!isUuid(id)) throw new NotFoundError();
  return id.toLowerCase();
}

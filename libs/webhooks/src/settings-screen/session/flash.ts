import { createHmac } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { clearCookie, readCookies, setCookie, tokensEqual } from './cookies';

/**
 * A one-time message for the page after a form ("Endpoint enabled."), carried in a cookie rather
 * than on the server, so the page shows it whichever instance serves it. The cookie is bound to
 * the session by an HMAC keyed with the session token: nobody else can plant a message.
 */
export const FLASH_COOKIE = 'filing_flash';
const MAX_MESSAGE_LENGTH = 1_000;

export function setFlash(reply: FastifyReply, sessionToken: string, message: string): void {
  const text = message.slice(0, MAX_MESSAGE_LENGTH);
  setCookie(
    reply,
    reply.request,
    FLASH_COOKIE,
    `${Buffer.from(text, 'utf8').toString('base64url')}.${macOf(sessionToken, text)}`,
  );
}

/** The message this session's request brought, once: the cookie is cleared (null: none, or not this session's). */
export function takeFlash(reply: FastifyReply, sessionToken: string): string | null {
  const value = readCookies(reply.request).get(FLASH_COOKIE);
  if (value === undefined) return null;
  clearCookie(reply, reply.request, FLASH_COOKIE);
  const dot = value.indexOf('.');
  if (dot < 0) return null;
  const text = Buffer.from(value.slice(0, dot), 'base64url').toString('utf8');
  return tokensEqual(value.slice(dot + 1), macOf(sessionToken, text)) ? text : null;
}

function macOf(sessionToken: string, text: string): string {
  return createHmac('sha256', sessionToken).update(`settings.flash\n${text}`).digest('base64url');
}

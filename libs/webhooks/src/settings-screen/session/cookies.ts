import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The session cookie: HttpOnly, SameSite=Strict, scoped to /settings, Secure over HTTPS. */
export const SESSION_COOKIE = 'filing_session';
/** The nonce of the sign-in form's signed double-submit token (sign-in-csrf.ts): no session yet to hold one. */
export const SIGN_IN_CSRF_COOKIE = 'filing_signin_csrf';
export const SETTINGS_PATH = '/settings';

/** `Cookie:` header → name/value pairs (first occurrence wins; values percent-decoded when they can be). */
export function readCookies(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = request.headers.cookie;
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      /* kept as sent */
    }
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/**
 * Served over HTTPS: directly (TLS_CERT_FILE), or behind a TLS-terminating proxy that says so in
 * `X-Forwarded-Proto` (request.protocol has it when the proxy is in TRUST_PROXY). The header is
 * also taken from any other peer: it only ever adds `Secure` to a cookie, harmless when spoofed,
 * and a proxy left out of TRUST_PROXY still gets Secure cookies.
 */
export function isHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',', 1)[0].trim().toLowerCase();
  return first === 'https';
}

/** Appends one Set-Cookie (several may be sent on one reply). `maxAge` 0 deletes the cookie. */
export function setCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  name: string,
  value: string,
  options: { path?: string; maxAgeSeconds?: number } = {},
): void {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path ?? SETTINGS_PATH}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (isHttps(request)) parts.push('Secure');
  // Fastify appends to an existing Set-Cookie rather than replacing it.
  reply.header('set-cookie', parts.join('; '));
}

export function clearCookie(reply: FastifyReply, request: FastifyRequest, name: string, path?: string): void {
  setCookie(reply, request, name, '', { path, maxAgeSeconds: 0 });
}

/** Constant-time equality of two tokens (false when either is missing). */
export function tokensEqual(a: unknown, b: string | undefined): boolean {
  if (typeof a !== 'string' || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

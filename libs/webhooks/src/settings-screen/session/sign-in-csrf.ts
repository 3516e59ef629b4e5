import { createHmac, randomBytes } from 'node:crypto';
import { tokensEqual } from './cookies';

/** The ServiceKeys purpose of the sign-in form's key. */
export const SIGN_IN_CSRF_KEY_PURPOSE = 'settings.sign-in-csrf';

const NONCE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The sign-in form's CSRF token, a signed double submit: the `filing_signin_csrf` cookie holds a
 * random nonce and the form's `_csrf` field its HMAC under a server key. Someone who can plant a
 * cookie in the victim's browser (a sibling subdomain, a man in the middle on plain HTTP) chooses
 * the nonce but cannot make the field that goes with it, so an equal cookie/field pair of their
 * choosing is refused (login CSRF). There is no session yet to bind the token to.
 */
export class SignInCsrf {
  readonly #key: Buffer;
  /** Keys whose fields are still accepted (from SECRETS_KEY_PREVIOUS, during a rotation); never used to sign. */
  readonly #accepted: readonly Buffer[];

  constructor(key: Uint8Array, accepted: readonly Uint8Array[] = []) {
    this.#key = Buffer.from(key);
    this.#accepted = accepted.map((k) => Buffer.from(k));
  }

  /** A new nonce for the cookie. */
  static nonce(): string {
    return randomBytes(32).toString('base64url');
  }

  /** Whether a cookie value is a nonce this form can use (else a new one is set). */
  static isNonce(value: string | undefined): value is string {
    return value !== undefined && NONCE.test(value);
  }

  /** The form field that goes with the cookie's nonce. */
  field(nonce: string): string {
    return fieldOf(this.#key, nonce);
  }

  /** Whether `field` is the one for the cookie's nonce (compared in constant time). */
  verify(nonce: string | undefined, field: unknown): boolean {
    return (
      SignInCsrf.isNonce(nonce) && [this.#key, ...this.#accepted].some((key) => tokensEqual(field, fieldOf(key, nonce)))
    );
  }
}

function fieldOf(key: Buffer, nonce: string): string {
  return createHmac('sha256', key).update(`sign-in:${nonce}`).digest('base64url');
}

import { randomBytes } from 'node:crypto';
import { SignInCsrf } from './sign-in-csrf';

describe('SignInCsrf', () => {
  const csrf = new SignInCsrf(randomBytes(32));

  it('accepts the field it made for the cookie nonce', () => {
    const nonce = SignInCsrf.nonce();
    expect(SignInCsrf.isNonce(nonce)).toBe(true);
    expect(csrf.verify(nonce, csrf.field(nonce))).toBe(true);
  });

  it('refuses a field equal to the cookie (the old double submit), one for another nonce, or one under another key', () => {
    const nonce = SignInCsrf.nonce();
    expect(csrf.verify(nonce, nonce)).toBe(false);
    expect(csrf.verify(nonce, csrf.field(SignInCsrf.nonce()))).toBe(false);
    expect(csrf.verify(nonce, new SignInCsrf(randomBytes(32)).field(nonce))).toBe(false);
  });

  it('refuses a missing or malformed cookie or field', () => {
    const nonce = SignInCsrf.nonce();
    const field = csrf.field(nonce);
    expect(csrf.verify(undefined, field)).toBe(false);
    expect(csrf.verify('short', csrf.field('short'))).toBe(false);
    expect(csrf.verify(nonce, undefined)).toBe(false);
    expect(csrf.verify(nonce, [field])).toBe(false);
    expect(csrf.verify(nonce, field.slice(0, -1))).toBe(false);
  });

  it('during a key rotation accepts a form signed under the previous key, and signs with the new one', () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const nonce = SignInCsrf.nonce();
    const rotated = new SignInCsrf(newKey, [oldKey]);
    expect(rotated.verify(nonce, new SignInCsrf(oldKey).field(nonce))).toBe(true);
    expect(new SignInCsrf(newKey).verify(nonce, rotated.field(nonce))).toBe(true);
    expect(new SignInCsrf(newKey).verify(nonce, new SignInCsrf(oldKey).field(nonce))).toBe(false);
  });
});

import { createHmac } from 'node:crypto';
import { generateSecret, secretFingerprint, sign, signatureHeader, verifySignature } from './signature';

describe('Standard Webhooks signing', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
  });

  it('matches the Standard Webhooks reference vector', () => {
    // From the standard-webhooks reference libraries' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const ts = 1614265330;
    const body = '{"test": 2432232314}';
    expect(sign(secret, id, ts, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('HMACs the secret bytes after whsec_ over id.timestamp.body', () => {
    const secret = generateSecret();
    const key = Buffer.from(secret.slice(6), 'base64');
    const expected = createHmac('sha256', key).update('e1.1700000000.{"a":1}').digest('base64');
    expect(sign(secret, 'e1', 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
  });

  it('sends one signature per secret during a rotation, space-separated, each verifiable', () => {
    const [oldS, newS] = [generateSecret(), generateSecret()];
    const header = signatureHeader([newS, oldS], 'e1', 1, '{}');
    expect(header.split(' ')).toHaveLength(2);
    expect(verifySignature(oldS, header, 'e1', 1, '{}')).toBe(true);
    expect(verifySignature(newS, header, 'e1', 1, '{}')).toBe(true);
    expect(verifySignature(generateSecret(), header, 'e1', 1, '{}')).toBe(false);
    expect(verifySignature(newS, header, 'e1', 2, '{}')).toBe(false);
  });

  it('fingerprints a secret without revealing it', () => {
    const s = generateSecret();
    expect(secretFingerprint(s)).toMatch(/^[0-9a-f]{16}$/);
    expect(s).not.toContain(secretFingerprint(s));
  });
});

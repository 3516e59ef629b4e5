import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ServiceKeys } from './service-keys';

describe('ServiceKeys', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'service-keys-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('derives one 32-byte key per purpose, the same from the same key file (a restart), another from another file', () => {
    const file = join(dir, 'cursor.key');
    const keys = ServiceKeys.fromKeyFile(file);
    const csrf = keys.derive('settings.sign-in-csrf');
    expect(csrf).toHaveLength(32);
    expect(keys.derive('other-purpose').equals(csrf)).toBe(false);
    expect(ServiceKeys.fromKeyFile(file).derive('settings.sign-in-csrf').equals(csrf)).toBe(true);
    expect(ServiceKeys.fromKeyFile(join(dir, 'other.key')).derive('settings.sign-in-csrf').equals(csrf)).toBe(false);
    // A derived key is not the root itself.
    expect(csrf.equals(readFileSync(file))).toBe(false);
  });

  it('from SECRETS_KEY: every instance derives the same keys, and makes no key file', () => {
    const secretsKey = Buffer.alloc(32, 3);
    const a = ServiceKeys.fromSecretsKey(secretsKey);
    const b = ServiceKeys.fromSecretsKey(Buffer.from(secretsKey));
    expect(a.source).toBe('secrets-key');
    expect(a.derive('settings.sign-in-csrf').equals(b.derive('settings.sign-in-csrf'))).toBe(true);
    expect(a.derive('settings.sign-in-csrf').equals(secretsKey)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('during a rotation derives from the new root and still accepts the previous one', () => {
    const old = ServiceKeys.fromSecretsKey(Buffer.alloc(32, 1));
    const rotated = ServiceKeys.fromSecretsKey(Buffer.alloc(32, 2), Buffer.alloc(32, 1));
    const [current, previous, ...more] = rotated.deriveAccepted('p');
    expect(current.equals(rotated.derive('p'))).toBe(true);
    expect(previous.equals(old.derive('p'))).toBe(true);
    expect(more).toEqual([]);
    // Its SecretBox seals under the new root and opens what the old one sealed.
    expect(rotated.secretBox().open(old.secretBox().seal('s', 'x'), 'x')).toBe('s');
    expect(rotated.secretBox().keyId).not.toBe(old.secretBox().keyId);
  });

  it('keeps the root out of inspect and JSON', () => {
    const root = Buffer.alloc(32, 7);
    const keys = new ServiceKeys(root);
    expect(inspect(keys, { depth: 5 })).not.toContain('7, 7, 7');
    expect(JSON.stringify(keys)).toBe('{}');
    const rotating = ServiceKeys.fromSecretsKey(Buffer.alloc(32, 8), root);
    expect(inspect(rotating, { depth: 5 })).not.toMatch(/7, 7, 7|8, 8, 8/);
    expect(JSON.stringify(rotating)).toBe('{}');
  });

  it('refuses a root of the wrong size', () => {
    expect(() => new ServiceKeys(Buffer.alloc(16))).toThrow(/32 bytes, not 16/);
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

  it('keeps the root out of inspect and JSON', () => {
    const root = Buffer.alloc(32, 7);
    const keys = new ServiceKeys(root);
    expect(inspect(keys, { depth: 5 })).not.toContain('7, 7, 7');
    expect(JSON.stringify(keys)).toBe('{}');
  });

  it('refuses a root of the wrong size', () => {
    expect(() => new ServiceKeys(Buffer.alloc(16))).toThrow(/32 bytes, not 16/);
  });
});

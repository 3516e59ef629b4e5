import { formatScope, grantScopes, parseScope } from './scopes';

describe('scopes', () => {
  it('parses a space-separated list into canonical order without duplicates', () => {
    expect(parseScope('write  read write')).toEqual(['read', 'write']);
    expect(parseScope('')).toBeNull();
    expect(parseScope('read "x"')).toBeNull();
    expect(formatScope(['write', 'read'])).toBe('read write');
  });

  it('grants everything allowed when nothing is asked, and exactly what is asked within it', () => {
    expect(grantScopes(['read', 'write'], undefined)).toEqual({ ok: true, scopes: ['read', 'write'] });
    expect(grantScopes(['read', 'write'], 'read')).toEqual({ ok: true, scopes: ['read'] });
    expect(grantScopes(['read'], 'read write')).toMatchObject({ ok: false });
    expect(grantScopes(['read', 'write'], 'operator')).toMatchObject({ ok: false });
  });
});

import { formatReadModelDifference } from './audit';

const TOKEN_HASH = 'a3f1c9e07b2d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6';

describe('an audit difference as the operator reads it', () => {
  it('names the table, the key and the columns that differ, and shows both rows', () => {
    const text = formatReadModelDifference({
      table: 'entities',
      key: '["e-1"]',
      keyColumns: ['id'],
      live: { id: 'e-1', name: 'Tampered', status: 'active', version: 2 },
      rebuilt: { id: 'e-1', name: 'Acme LLC', status: 'active', version: 3 },
    });
    expect(text).toBe(
      'DIFF entities ["e-1"]\n  columns: name, version\n' +
        '  live:    {"id":"e-1","name":"Tampered","status":"active","version":2}\n' +
        '  rebuilt: {"id":"e-1","name":"Acme LLC","status":"active","version":3}\n',
    );
  });

  it('shows a missing row as null, without a column list', () => {
    const text = formatReadModelDifference({
      table: 'entities',
      key: '["e-2"]',
      keyColumns: ['id'],
      live: null,
      rebuilt: { id: 'e-2' },
    });
    expect(text).toBe('DIFF entities ["e-2"]\n  live:    null\n  rebuilt: {"id":"e-2"}\n');
  });

  it('shows credential hashes, in rows and in keys, only by their first characters', () => {
    const text = formatReadModelDifference({
      table: 'oauth_tokens',
      key: JSON.stringify([TOKEN_HASH]),
      keyColumns: ['token_hash'],
      live: { token_hash: TOKEN_HASH, client_id: 'c-1', revoked: 1 },
      rebuilt: { token_hash: TOKEN_HASH, client_id: 'c-1', revoked: 0 },
    });
    expect(text).not.toContain(TOKEN_HASH);
    expect(text).toContain('DIFF oauth_tokens ["a3f1c9e0…"]\n  columns: revoked\n');
    expect(text).toContain('"token_hash":"a3f1c9e0…"');
  });
});

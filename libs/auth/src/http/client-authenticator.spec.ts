import { liveSecrets, parseBasic } from './client-authenticator';
import type { ClientRow } from '../read-model/auth.queries';
import { requirementOf } from './api-access.guard';

const basic = (raw: string) => `Basic ${Buffer.from(raw, 'utf8').toString('base64')}`;

describe('parseBasic (RFC 6749 §2.3.1)', () => {
  it('decodes form-urlencoded client_id and secret', () => {
    expect(parseBasic(basic('my%20client:s%3Ae+cret%25'))).toEqual({ clientId: 'my client', secret: 's:e cret%' });
    expect(parseBasic(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({ clientId: 'a', secret: 'b' });
  });

  it('refuses other schemes, missing parts and bad encodings', () => {
    expect(parseBasic('Bearer abc')).toBeNull();
    expect(parseBasic(basic('no-colon'))).toBeNull();
    expect(parseBasic(basic(':secret'))).toBeNull();
    expect(parseBasic(basic('id:%E0%A4%A'))).toBeNull();
    expect(parseBasic('Basic !!!')).toBeNull();
  });
});

describe('requirementOf', () => {
  it('needs read for GET/HEAD and write otherwise on the external API, operator on the internal API', () => {
    expect(requirementOf('/external-api/v1/entities', 'GET')).toEqual({ realm: 'external-api', scope: 'read' });
    expect(requirementOf('/external-api/v1/entities/:id', 'HEAD')).toEqual({ realm: 'external-api', scope: 'read' });
    expect(requirementOf('/external-api/v1/entities', 'POST')).toEqual({ realm: 'external-api', scope: 'write' });
    expect(requirementOf('/external-api/v1/entities/:id', 'DELETE')).toEqual({ realm: 'external-api', scope: 'write' });
    expect(requirementOf('/internal-api/v1/accounts', 'GET')).toEqual({ realm: 'internal-api', scope: 'operator' });
  });

  it('leaves other paths public', () => {
    expect(requirementOf('/healthz', 'GET')).toBeNull();
    expect(requirementOf('/o/token', 'POST')).toBeNull();
    expect(requirementOf('/external-api/v1/openapi.json', 'GET')).toBeNull();
  });
});

describe('liveSecrets: what the token endpoint accepts for a client', () => {
  const T = Date.parse('2026-01-01T00:00:00.000Z');
  const row = (overrides: Partial<ClientRow> = {}): ClientRow => ({
    client_id: 'c1',
    account_id: 'a1',
    kind: 'customer',
    scopes: 'read write',
    secret_hash: 'h2',
    secret_generation: 2,
    status: 'active',
    previous_secret_hash: 'h1',
    previous_secret_generation: 1,
    previous_secret_expires_at: T + 5_000,
    created_at: '',
    updated_at: '',
    version: 1,
    ...overrides,
  });

  it('the current secret, and the previous one until its stored expiry', () => {
    expect(liveSecrets(row(), T + 4_999)).toEqual([
      { hash: 'h2', generation: 2, expiresAt: null },
      { hash: 'h1', generation: 1, expiresAt: T + 5_000 },
    ]);
    expect(liveSecrets(row(), T + 5_000)).toEqual([{ hash: 'h2', generation: 2, expiresAt: null }]);
  });

  it('nothing for a revoked or unknown client; only the current one without an overlap', () => {
    expect(liveSecrets(row({ status: 'revoked' }), T)).toEqual([]);
    expect(liveSecrets(undefined, T)).toEqual([]);
    const none = { previous_secret_hash: null, previous_secret_generation: null, previous_secret_expires_at: null };
    expect(liveSecrets(row(none), T).map((s) => s.generation)).toEqual([2]);
  });
});

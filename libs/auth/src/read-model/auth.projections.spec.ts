import type { ProjectionRunner, RecordedEnvelope } from '@filing/platform';
import Database from 'better-sqlite3';
import { AuthEvents, type AuthEvent } from '../auth.events';
import { sha256 } from '../crypto/secrets';
import { BearerTokenVerifier } from '../http/bearer.strategy';
import { AuthQueries, isTokenLive } from './auth.queries';
import { ClientsProjection } from './clients.projection';
import { TokensProjection } from './tokens.projection';

let position = 0;
function recorded(event: AuthEvent, revision: number, at: string): RecordedEnvelope {
  const p = position++;
  return {
    ...event,
    id: `ev-${p}`,
    streamId: 's',
    revision: BigInt(revision),
    position: { commit: BigInt(p), prepare: BigInt(p) },
    metadata: {
      account_id: 'a1',
      actor: 'operator:test',
      correlation_id: 'x',
      causation_id: null,
      occurred_at: at,
      schema_version: 1,
    },
  };
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const issued = (hash: string, at: number, ttlMs = 3_600_000, generation = 1): AuthEvent => ({
  type: AuthEvents.TokenIssued,
  data: {
    token_hash: hash,
    client_id: 'c1',
    account_id: 'a1',
    scopes: ['read', 'write'],
    issued_at: iso(at),
    expires_at: iso(at + ttlMs),
    client_secret_generation: generation,
  },
});

describe('auth read models (clients, tokens)', () => {
  let db: Database.Database;
  let queries: AuthQueries;
  const clients = new ClientsProjection();
  const tokens = new TokensProjection();
  const apply = (event: AuthEvent, revision: number, at: number) => {
    const envelope = recorded(event, revision, iso(at));
    (event.type.startsWith('auth.Token') ? tokens : clients).apply(db, envelope);
  };

  beforeEach(() => {
    db = new Database(':memory:');
    clients.setup(db);
    tokens.setup(db);
    queries = new AuthQueries({ db } as unknown as ProjectionRunner);
    apply(
      {
        type: AuthEvents.ClientCreated,
        data: {
          client_id: 'c1',
          account_id: 'a1',
          kind: 'customer',
          scopes: ['read', 'write'],
          secret_hash: 'h1',
          secret_generation: 1,
        },
      },
      0,
      T0,
    );
  });

  it('a token is live until it expires, with its scopes and times', () => {
    apply(issued('t1', T0), 0, T0);
    const row = queries.token('t1')!;
    expect(row).toMatchObject({
      client_id: 'c1',
      account_id: 'a1',
      scopes: 'read write',
      issued_at: T0,
      expires_at: T0 + 3_600_000,
    });
    expect(isTokenLive(row, T0 + 1)).toBe(true);
    expect(isTokenLive(row, T0 + 3_600_000)).toBe(false);
  });

  it('revoking the token, rotating the secret or revoking the client ends it', () => {
    apply(issued('t1', T0), 0, T0);
    apply(issued('t2', T0), 1, T0);
    apply({ type: AuthEvents.TokenRevoked, data: { token_hash: 't1', client_id: 'c1' } }, 2, T0 + 10);
    expect(isTokenLive(queries.token('t1')!, T0 + 20)).toBe(false);
    expect(isTokenLive(queries.token('t2')!, T0 + 20)).toBe(true);

    apply(
      { type: AuthEvents.ClientSecretRotated, data: { client_id: 'c1', secret_hash: 'h2', secret_generation: 2 } },
      1,
      T0 + 30,
    );
    expect(isTokenLive(queries.token('t2')!, T0 + 40)).toBe(false);
    expect(queries.client('c1')).toMatchObject({ secret_hash: 'h2', secret_generation: 2, version: 1 });

    apply(issued('t3', T0 + 50, 3_600_000, 2), 3, T0 + 50);
    expect(isTokenLive(queries.token('t3')!, T0 + 60)).toBe(true);
    apply({ type: AuthEvents.ClientRevoked, data: { client_id: 'c1' } }, 2, T0 + 70);
    expect(isTokenLive(queries.token('t3')!, T0 + 80)).toBe(false);
    expect(queries.client('c1')).toMatchObject({ status: 'revoked', version: 2 });
  });

  it("the bearer guard's cached read (liveToken) sees a revocation, a rotation and a client's revocation at once", () => {
    apply(issued('t1', T0), 0, T0);
    apply(issued('t2', T0), 1, T0);
    apply(issued('t3', T0), 2, T0);
    const live = (hash: string, now: number) => isTokenLive(queries.liveToken(hash)!, now);
    expect([live('t1', T0 + 1), live('t2', T0 + 1)]).toEqual([true, true]);
    expect(queries.liveToken('nope')).toBeUndefined();
    expect(live('t1', T0 + 3_600_000)).toBe(false); // expiry: checked on every read

    apply({ type: AuthEvents.TokenRevoked, data: { token_hash: 't1', client_id: 'c1' } }, 3, T0 + 10);
    expect([live('t1', T0 + 20), live('t2', T0 + 20)]).toEqual([false, true]);
    apply(
      { type: AuthEvents.ClientSecretRotated, data: { client_id: 'c1', secret_hash: 'h2', secret_generation: 2 } },
      1,
      T0 + 30,
    );
    expect(live('t2', T0 + 40)).toBe(false);
    apply(issued('t4', T0 + 50, 3_600_000, 2), 4, T0 + 50);
    expect(live('t4', T0 + 60)).toBe(true);
    apply({ type: AuthEvents.ClientRevoked, data: { client_id: 'c1' } }, 2, T0 + 70);
    expect(live('t4', T0 + 80)).toBe(false);
  });

  it("the bearer guard's remembered verdicts last until a token or client event, or the token's expiry", () => {
    jest.useFakeTimers({ now: T0 + 1 });
    try {
      const verifier = new BearerTokenVerifier(queries);
      apply(issued(sha256('tok-1'), T0, 60_000), 0, T0);
      apply(issued(sha256('tok-2'), T0), 1, T0);
      const header = 'Bearer tok-1';
      expect(verifier.recall(header)).toBeUndefined();
      expect(verifier.verify('nope', 'Bearer nope')).toBe(false);
      expect(verifier.recall('Bearer nope')).toBeUndefined(); // refusals are never kept
      const principal = verifier.verify('tok-1', header);
      expect(principal).toEqual({ kind: 'client', accountId: 'a1', subjectId: 'c1', scopes: ['read', 'write'] });
      expect(verifier.recall(header)).toBe(principal);
      expect(verifier.recall('bearer tok-1')).toBeUndefined(); // only the very header passport accepted
      expect(Object.isFrozen(principal) && Object.isFrozen((principal as { scopes: unknown }).scopes)).toBe(true);

      jest.setSystemTime(T0 + 60_000); // the token's expiry
      expect(verifier.recall(header)).toBeUndefined();
      jest.setSystemTime(T0 + 2);
      expect(verifier.recall(header)).toBe(principal);
      // Another token's event clears every kept verdict (its client's may have changed too).
      apply({ type: AuthEvents.TokenRevoked, data: { token_hash: sha256('tok-2'), client_id: 'c1' } }, 2, T0 + 2);
      expect(verifier.recall(header)).toBeUndefined();
      verifier.verify('tok-1', header);
      apply({ type: AuthEvents.ClientRevoked, data: { client_id: 'c1' } }, 1, T0 + 3);
      expect(verifier.recall(header)).toBeUndefined();
      expect(verifier.verify('tok-1', header)).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it("drops tokens that had expired when a later one was issued (by the event's time, so rebuilds agree)", () => {
    apply(issued('old', T0, 1_000), 0, T0);
    apply(issued('recent', T0 + 500, 1_000), 1, T0 + 500);
    apply(issued('new', T0 + 1_200, 1_000), 2, T0 + 1_200);
    expect(queries.token('old')).toBeUndefined();
    expect(queries.token('recent')).toBeDefined();
    expect(queries.token('new')).toBeDefined();
  });

  it('applying an event twice changes nothing', () => {
    const event = recorded(issued('t1', T0), 0, iso(T0));
    tokens.apply(db, event);
    tokens.apply(db, event);
    expect(db.prepare('SELECT COUNT(*) AS n FROM oauth_tokens').get()).toEqual({ n: 1 });
  });

  describe('rotation with overlap', () => {
    const rotated = (generation: number, previousExpiresAt?: number): AuthEvent => ({
      type: AuthEvents.ClientSecretRotated,
      data: {
        client_id: 'c1',
        secret_hash: `h${generation}`,
        secret_generation: generation,
        ...(previousExpiresAt === undefined ? {} : { previous_secret_expires_at: iso(previousExpiresAt) }),
      },
    });
    const liveAt = (hash: string, now: number) => isTokenLive(queries.liveToken(hash)!, now);

    it("the old secret's tokens live until the stored expiry, however late the event is applied", () => {
      apply(issued('old', T0), 0, T0);
      apply(rotated(2, T0 + 5_000), 1, T0 + 10);
      expect(queries.client('c1')).toMatchObject({
        secret_hash: 'h2',
        secret_generation: 2,
        previous_secret_hash: 'h1',
        previous_secret_generation: 1,
        previous_secret_expires_at: T0 + 5_000,
      });
      apply(issued('new', T0 + 20, 3_600_000, 2), 1, T0 + 20);
      // The clock at the request decides, against the instant the event holds.
      expect([liveAt('old', T0 + 4_999), liveAt('new', T0 + 4_999)]).toEqual([true, true]);
      expect([liveAt('old', T0 + 5_000), liveAt('new', T0 + 5_000)]).toEqual([false, true]);
    });

    it('a token of the old secret still ends at its own expiry when that is sooner', () => {
      apply(issued('short', T0, 1_000), 0, T0);
      apply(rotated(2, T0 + 5_000), 1, T0 + 10);
      expect(liveAt('short', T0 + 999)).toBe(true);
      expect(liveAt('short', T0 + 1_000)).toBe(false);
    });

    it('a second rotation replaces the pending previous secret, whose tokens stop', () => {
      apply(issued('g1', T0), 0, T0);
      apply(rotated(2, T0 + 60_000), 1, T0 + 10);
      apply(issued('g2', T0 + 20, 3_600_000, 2), 1, T0 + 20);
      apply(rotated(3, T0 + 120_000), 2, T0 + 30);
      expect(queries.client('c1')).toMatchObject({ previous_secret_generation: 2, previous_secret_hash: 'h2' });
      expect([liveAt('g1', T0 + 40), liveAt('g2', T0 + 40)]).toEqual([false, true]);
      apply(rotated(4), 3, T0 + 50); // no overlap: every older secret stops
      expect(queries.client('c1')).toMatchObject({
        previous_secret_generation: null,
        previous_secret_expires_at: null,
      });
      expect(liveAt('g2', T0 + 60)).toBe(false);
    });

    it('expiring the previous secret ends its tokens at once; applying it twice changes nothing', () => {
      apply(issued('old', T0), 0, T0);
      apply(rotated(2, T0 + 60_000), 1, T0 + 10);
      expect(liveAt('old', T0 + 20)).toBe(true);
      const expired = recorded(
        { type: AuthEvents.ClientPreviousSecretExpired, data: { client_id: 'c1', secret_generation: 1 } },
        2,
        iso(T0 + 30),
      );
      clients.apply(db, expired);
      clients.apply(db, expired);
      expect(liveAt('old', T0 + 40)).toBe(false);
      expect(queries.client('c1')).toMatchObject({ previous_secret_hash: null, secret_generation: 2, version: 2 });
    });

    it('records when each secret last got a token, from the token events', () => {
      apply(issued('a', T0), 0, T0);
      apply(rotated(2, T0 + 60_000), 1, T0 + 10);
      apply(issued('b', T0 + 20, 3_600_000, 2), 1, T0 + 20);
      apply(issued('c', T0 + 30, 3_600_000, 1), 2, T0 + 30);
      expect(queries.clientWithUsage('c1')).toMatchObject({
        secret_last_used_at: iso(T0 + 20),
        previous_secret_last_used_at: iso(T0 + 30),
      });
      expect(queries.accountClients('a1').map((c) => c.client_id)).toEqual(['c1']);
      expect(queries.accountClients('a2')).toEqual([]);
    });
  });
});

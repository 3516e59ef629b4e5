import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ReadYourWrites } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientKind } from '../auth.events';
import { isUuid } from '../commands/load';
import { digestsEqual, dummyHash, sha256, verifySecret } from '../crypto/secrets';
import { AuthQueries } from '../read-model/auth.queries';
import { FailedAuthThrottle } from './failed-auth-throttle';
import { DuplicateParameterError, FormFields, oauthError } from './oauth-error';

export interface AuthenticatedClient {
  readonly clientId: string;
  readonly accountId: string | null;
  readonly kind: ClientKind;
  readonly scopes: readonly string[];
  /** The generation of the secret it authenticated with: the current one, or a previous one still live. */
  readonly secretGeneration: number;
  /** When that secret stops working (epoch ms): a previous secret's expiry; null for the current one. */
  readonly secretExpiresAt: number | null;
}

type ClientRow = NonNullable<ReturnType<AuthQueries['client']>>;

/** A secret of a client's row the authenticator may accept: the current one, or a previous one still live. */
interface LiveSecret {
  readonly hash: string;
  readonly generation: number;
  readonly expiresAt: number | null;
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="token"' };
const MAX_SECRET_LENGTH = 512;
const MAX_VERIFIED_CACHE = 10_000;
const CATCH_UP_MS = 2_000;

/** The secrets of an active client that work at `now`: the current one first, then a previous one in its overlap. */
export function liveSecrets(row: ClientRow | undefined, now: number): LiveSecret[] {
  if (!row || row.status !== 'active') return [];
  const secrets: LiveSecret[] = [{ hash: row.secret_hash, generation: row.secret_generation, expiresAt: null }];
  const { previous_secret_hash: hash, previous_secret_generation: generation } = row;
  const expiresAt = row.previous_secret_expires_at;
  if (hash !== null && generation !== null && expiresAt !== null && now < expiresAt)
    secrets.push({ hash, generation, expiresAt });
  return secrets;
}

/**
 * Client authentication for the token, revocation and introspection endpoints (RFC 6749 §2.3.1):
 * `client_id` + `client_secret` form fields, or HTTP Basic with both form-urlencoded, never both.
 *
 * Secrets are checked against their scrypt hash in constant time; an unknown client_id is
 * checked against a dummy hash, so it costs the same. During a rotation's overlap the previous
 * secret is accepted too, until its expiry. A secret once verified is remembered as (client_id,
 * secret generation, SHA-256 of the secret) so repeat requests skip scrypt; the entry stops
 * matching as soon as the read model no longer shows that generation live.
 */
@Injectable()
export class ClientAuthenticator {
  /** By `client_id generation`: both secrets of an overlap stay remembered while both are in use. */
  private readonly verified = new Map<string, string>();

  constructor(
    private readonly queries: AuthQueries,
    private readonly throttle: FailedAuthThrottle,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async authenticate(request: FastifyRequest, reply: FastifyReply): Promise<AuthenticatedClient> {
    const credentials = this.credentials(request, reply);
    const { clientId: rawId, secret, basic } = credentials;
    const clientId = rawId.toLowerCase();
    const address = request.ip;
    const known = isUuid(clientId);
    let row = known ? this.queries.client(clientId) : undefined;
    const digest = sha256(secret);

    for (const live of row ? liveSecrets(row, Date.now()) : []) {
      const cached = this.verified.get(cacheKey(clientId, live.generation));
      if (row && cached !== undefined && digestsEqual(cached, digest)) return this.toClient(row, live);
    }

    const retryAfter = this.throttle.retryAfter(clientId, address);
    if (retryAfter !== null) {
      throw oauthError(
        reply,
        429,
        'too_many_requests',
        `Too many failed authentication attempts; retry in ${retryAfter} s`,
        {
          'retry-after': String(retryAfter),
        },
      );
    }

    const candidate = secret.length <= MAX_SECRET_LENGTH ? secret : '';
    let match = await this.match(candidate, row);
    if (!match && known) {
      // The client may have just been created or rotated by another process (the CLI) and not be
      // in the read model yet: catch up with the store once, and check again if the row changed.
      await this.readYourWrites.await(await this.store.headPosition(), CATCH_UP_MS);
      const fresh = this.queries.client(clientId);
      if (
        fresh &&
        (fresh.secret_hash !== row?.secret_hash || fresh.previous_secret_hash !== row?.previous_secret_hash)
      ) {
        row = fresh;
        match = await this.match(candidate, row);
      }
    }
    if (!row || !match || candidate !== secret) {
      this.throttle.recordFailure(clientId, address);
      throw oauthError(reply, 401, 'invalid_client', 'Client authentication failed', basic ? BASIC_CHALLENGE : {});
    }
    this.remember(cacheKey(clientId, match.generation), digest);
    return this.toClient(row, match);
  }

  /** The live secret of the row this one is (one scrypt per live secret; a dummy one without a row). */
  private async match(candidate: string, row: ClientRow | undefined): Promise<LiveSecret | null> {
    const secrets = liveSecrets(row, Date.now());
    if (secrets.length === 0) {
      await verifySecret(candidate, row?.secret_hash ?? (await dummyHash()));
      return null;
    }
    for (const live of secrets) if (await verifySecret(candidate, live.hash)) return live;
    return null;
  }

  private remember(key: string, digest: string): void {
    this.verified.delete(key);
    this.verified.set(key, digest);
    if (this.verified.size > MAX_VERIFIED_CACHE) this.verified.delete(this.verified.keys().next().value as string);
  }

  private toClient(row: ClientRow, secret: LiveSecret): AuthenticatedClient {
    return {
      clientId: row.client_id,
      accountId: row.account_id,
      kind: row.kind,
      scopes: row.scopes.split(' ').filter(Boolean),
      secretGeneration: secret.generation,
      secretExpiresAt: secret.expiresAt,
    };
  }

  private credentials(
    request: FastifyRequest,
    reply: FastifyReply,
  ): { clientId: string; secret: string; basic: boolean } {
    const form = new FormFields(request.body);
    const header = request.headers.authorization;
    const inBody = form.has('client_id') || form.has('client_secret');
    if (header !== undefined) {
      if (inBody) {
        throw oauthError(
          reply,
          400,
          'invalid_request',
          'Authenticate the client either with HTTP Basic or in the body, not both',
        );
      }
      const basic = parseBasic(header);
      if (!basic) {
        throw oauthError(
          reply,
          401,
          'invalid_client',
          'The Authorization header must be HTTP Basic with the client_id and client_secret',
          BASIC_CHALLENGE,
        );
      }
      return { clientId: basic.clientId, secret: basic.secret, basic: true };
    }
    let clientId: string | undefined;
    let secret: string | undefined;
    try {
      clientId = form.get('client_id');
      secret = form.get('client_secret');
    } catch (err) {
      if (err instanceof DuplicateParameterError) throw oauthError(reply, 400, 'invalid_request', err.message);
      throw err;
    }
    if (clientId === undefined || secret === undefined) {
      throw oauthError(
        reply,
        401,
        'invalid_client',
        'Client authentication is required: client_id and client_secret, or HTTP Basic',
        inBody ? {} : BASIC_CHALLENGE,
      );
    }
    return { clientId, secret, basic: false };
  }
}

function cacheKey(clientId: string, generation: number): string {
  return `${clientId} ${generation}`;
}

/** RFC 6749 §2.3.1: `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`. */
export function parseBasic(header: string): { clientId: string; secret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    const clientId = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    return clientId && secret ? { clientId, secret } : null;
  } catch {
    return null;
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

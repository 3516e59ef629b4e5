import { type EventStore, NO_STREAM, STREAM_EXISTS, WrongExpectedVersionError } from '@filing/event-store';
import {
  buildMetadata,
  type CommandContext,
  cachedStatement,
  type DomainEvent,
  type ProjectionRunner,
  type ReadYourWrites,
  streamName,
  toEventData,
  extend,
} from '@filing/platform';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  SESSION_STREAM,
  SessionEvents,
  type SessionActive,
  type SessionEnded,
  type SessionStarted,
} from './session.events';

/** A signed-in settings-screen user. */
export interface SettingsSession {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  /** The synchronizer token every form of this session carries (`_csrf`). */
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
}

export interface SessionLimits {
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  readonly absoluteMs: number;
  /**
   * A use is recorded (an event, so every instance restarts the idle clock) at most this often:
   * a session may end up to this much before `idleMs` of true idleness.
   */
  readonly activityEveryMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleMs: 30 * 60_000,
  absoluteMs: 12 * 60 * 60_000,
  activityEveryMs: 60_000,
};

interface Row {
  user_id: string;
  account_id: string;
  email: string;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
}

/**
 * Server-side sessions of the settings screen, as events (session.events.ts) projected into
 * `settings_sessions` (sessions.projection.ts): every instance on one event store knows every
 * session, and a sign-out on one ends it on all. The cookie carries a 256-bit random token; events
 * and rows keep only its SHA-256, and the session's CSRF token is an HMAC of the token, so neither
 * the event store nor a read model lets anybody in or forges a form.
 *
 * Each change waits for the read model (read-your-writes), so the next request on this instance
 * sees it; other instances see it once they have read the event (with EVENT_STORE=esdb every
 * request waits for that first, platform `HeadBarrier`).
 *
 * `clock` is a seam for tests (session expiry without waiting).
 */
export class SettingsSessionStore {
  clock: () => number = Date.now;

  constructor(
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly ryw: ReadYourWrites,
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {}

  /** A new session (sign-in); returns the token for the cookie. */
  async create(user: {
    userId: string;
    accountId: string;
    email: string;
  }): Promise<{ token: string; session: SettingsSession }> {
    const now = this.clock();
    const token = randomBytes(32).toString('base64url');
    const tokenHash = hashOf(token);
    const started: SessionStarted = {
      type: SessionEvents.Started,
      data: {
        token_hash: tokenHash,
        user_id: user.userId,
        account_id: user.accountId,
        email: user.email,
        started_at: new Date(now).toISOString(),
        expires_at: new Date(now + this.limits.absoluteMs).toISOString(),
      },
    };
    const stream = sessionStream(tokenHash);
    await this.append(stream, started, user, NO_STREAM);
    // Past its end a session's events serve nobody: the store may drop them.
    await this.store.setStreamMetadata(stream, { maxAge: Math.ceil(this.limits.absoluteMs / 1000) + 3600 });
    return { token, session: extend(user, { csrfToken: csrfTokenOf(token), createdAt: now, lastSeenAt: now }) };
  }

  /** The live session of a cookie token, its use recorded; null when unknown, ended or expired. */
  async get(token: string | undefined): Promise<SettingsSession | null> {
    if (!token || token.length > 100) return null;
    const tokenHash = hashOf(token);
    const row = cachedStatement(this.runner.db, 'SELECT * FROM settings_sessions WHERE token_hash = ?').get(
      tokenHash,
    ) as Row | undefined;
    if (!row) return null;
    const now = this.clock();
    if (now - row.last_seen_at >= this.limits.idleMs || now >= row.expires_at) return null;
    const user = { userId: row.user_id, accountId: row.account_id };
    if (now - row.last_seen_at >= this.limits.activityEveryMs) {
      const active: SessionActive = {
        type: SessionEvents.Active,
        data: { token_hash: tokenHash, at: new Date(now).toISOString() },
      };
      await this.append(sessionStream(tokenHash), active, user, STREAM_EXISTS);
    }
    return extend(user, {
      email: row.email,
      csrfToken: csrfTokenOf(token),
      createdAt: row.created_at,
      lastSeenAt: now,
    });
  }

  /** Signs out: the session ends everywhere. Nothing happens for a token that never started one. */
  async destroy(token: string | undefined): Promise<void> {
    if (!token || token.length > 100) return;
    const tokenHash = hashOf(token);
    const row = cachedStatement(
      this.runner.db,
      'SELECT user_id, account_id FROM settings_sessions WHERE token_hash = ?',
    ).get(tokenHash) as Pick<Row, 'user_id' | 'account_id'> | undefined;
    if (!row) return;
    const ended: SessionEnded = { type: SessionEvents.Ended, data: { token_hash: tokenHash, reason: 'signed_out' } };
    await this.append(
      sessionStream(tokenHash),
      ended,
      { userId: row.user_id, accountId: row.account_id },
      STREAM_EXISTS,
    );
  }

  private async append(
    stream: string,
    event: DomainEvent,
    user: { userId: string; accountId: string },
    expectedRevision: typeof NO_STREAM | typeof STREAM_EXISTS,
  ): Promise<void> {
    const context: CommandContext = {
      account_id: user.accountId,
      actor: `user:${user.userId}`,
      correlation_id: randomUUID(),
      causation_id: null,
    };
    try {
      const { position } = await this.store.appendToStream(
        stream,
        [toEventData(event, buildMetadata(context, new Date(this.clock())))],
        {
          expectedRevision,
        },
      );
      await this.ryw.await(position);
    } catch (err) {
      // A session stream that is not there (dropped after its end) has nothing left to record.
      if (!(err instanceof WrongExpectedVersionError && expectedRevision === STREAM_EXISTS)) throw err;
    }
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The session's synchronizer token: derived from the cookie's token, so no instance has to store it. */
function csrfTokenOf(token: string): string {
  return createHmac('sha256', token).update('settings.session-csrf').digest('base64url');
}

function sessionStream(tokenHash: string): string {
  return streamName(SESSION_STREAM, tokenHash);
}

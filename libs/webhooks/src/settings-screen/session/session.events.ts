import type { DomainEvent } from '@filing/platform';

/**
 * A settings-screen session's life, one stream per session (`settingssession-<token hash>`), so
 * every instance knows every session. The cookie's token itself is never in an event: only its
 * SHA-256, which lets nobody in.
 */
export const SessionEvents = {
  Started: 'settings.SessionStarted',
  /** The session was used again after a while: restarts its idle clock on every instance. */
  Active: 'settings.SessionActive',
  /** Signed out: the session ends on every instance. */
  Ended: 'settings.SessionEnded',
} as const;

export type SessionStarted = DomainEvent<
  typeof SessionEvents.Started,
  {
    token_hash: string;
    user_id: string;
    account_id: string;
    email: string;
    started_at: string;
    /** The absolute end, whatever the use (sign-in + 12 h by default). */
    expires_at: string;
  }
>;
export type SessionActive = DomainEvent<typeof SessionEvents.Active, { token_hash: string; at: string }>;
export type SessionEnded = DomainEvent<typeof SessionEvents.Ended, { token_hash: string; reason: 'signed_out' }>;
export type SessionEvent = SessionStarted | SessionActive | SessionEnded;

export const SESSION_STREAM = 'settingssession';

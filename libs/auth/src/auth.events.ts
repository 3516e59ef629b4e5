import type { DomainEvent } from '@filing/platform';

/**
 * The auth context's public contract: event type names and data. Secrets, tokens and passwords
 * never appear here, only their hashes (scrypt for secrets and passwords, SHA-256 for tokens).
 */
export const AuthEvents = {
  AccountCreated: 'auth.AccountCreated',
  ClientCreated: 'auth.ClientCreated',
  ClientSecretRotated: 'auth.ClientSecretRotated',
  ClientPreviousSecretExpired: 'auth.ClientPreviousSecretExpired',
  ClientRevoked: 'auth.ClientRevoked',
  UserEmailReserved: 'auth.UserEmailReserved',
  UserCreated: 'auth.UserCreated',
  TokenIssued: 'auth.TokenIssued',
  TokenRevoked: 'auth.TokenRevoked',
} as const;

export type ClientKind = 'customer' | 'operator';

export type AccountCreated = DomainEvent<typeof AuthEvents.AccountCreated, { account_id: string; name: string }>;

export type ClientCreated = DomainEvent<
  typeof AuthEvents.ClientCreated,
  {
    client_id: string;
    /** null for operator clients, which belong to no account. */
    account_id: string | null;
    kind: ClientKind;
    /** The scopes the client may ask for. */
    scopes: string[];
    /** scrypt hash (`scrypt$N$r$p$salt$hash`) of the secret shown once at creation. */
    secret_hash: string;
    secret_generation: number;
  }
>;

/**
 * With `previous_secret_expires_at` (a rotation with overlap) the secret it replaces, and the
 * tokens issued with it, keep working until that instant; without it they stop at once. The
 * instant is decided when the rotation is, so every instance and every replay agree on it.
 */
export type ClientSecretRotated = DomainEvent<
  typeof AuthEvents.ClientSecretRotated,
  { client_id: string; secret_hash: string; secret_generation: number; previous_secret_expires_at?: string }
>;

/** The overlap of a rotation ended early: the previous secret (that generation) and its tokens stop now. */
export type ClientPreviousSecretExpired = DomainEvent<
  typeof AuthEvents.ClientPreviousSecretExpired,
  { client_id: string; secret_generation: number }
>;

export type ClientRevoked = DomainEvent<typeof AuthEvents.ClientRevoked, { client_id: string }>;

/** On `useremail-<sha256(normalized email)>`, appended with expected `no_stream`: one user per email. */
export type UserEmailReserved = DomainEvent<
  typeof AuthEvents.UserEmailReserved,
  { email: string; user_id: string; account_id: string }
>;

export type UserCreated = DomainEvent<
  typeof AuthEvents.UserCreated,
  { user_id: string; account_id: string; email: string; password_hash: string }
>;

/** On `clienttokens-<client_id>`. `token_hash` is the SHA-256 (hex) of the opaque token. */
export type TokenIssued = DomainEvent<
  typeof AuthEvents.TokenIssued,
  {
    token_hash: string;
    client_id: string;
    account_id: string | null;
    scopes: string[];
    issued_at: string;
    expires_at: string;
    client_secret_generation: number;
  }
>;

export type TokenRevoked = DomainEvent<typeof AuthEvents.TokenRevoked, { token_hash: string; client_id: string }>;

export type AuthEvent =
  | AccountCreated
  | ClientCreated
  | ClientSecretRotated
  | ClientPreviousSecretExpired
  | ClientRevoked
  | UserEmailReserved
  | UserCreated
  | TokenIssued
  | TokenRevoked;

/** Stream names (`<context>-<id>`). */
export const accountStream = (accountId: string) => `account-${accountId}`;
export const clientStream = (clientId: string) => `client-${clientId}`;
export const userStream = (userId: string) => `user-${userId}`;
export const clientTokensStream = (clientId: string) => `clienttokens-${clientId}`;
export const userEmailStream = (emailHash: string) => `useremail-${emailHash}`;

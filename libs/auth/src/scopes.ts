import type { ClientKind } from './auth.events';

/** What each kind of client may be granted (CONTRACT.md §1). Also the canonical order of scopes. */
export const ALLOWED_SCOPES: Record<ClientKind, readonly string[]> = {
  customer: ['read', 'write'],
  operator: ['operator'],
};

const ORDER = ['read', 'write', 'operator'];
/** RFC 6749 §3.3 scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** `"write  read"` → `['read', 'write']` (deduplicated, canonical order); null when malformed. */
export function parseScope(scope: string): string[] | null {
  const parts = scope.split(' ').filter((s) => s.length > 0);
  if (parts.length === 0 || parts.some((s) => !SCOPE_TOKEN.test(s))) return null;
  return sortScopes([...new Set(parts)]);
}

export function sortScopes(scopes: readonly string[]): string[] {
  const rank = (s: string) => (ORDER.includes(s) ? ORDER.indexOf(s) : ORDER.length);
  return [...scopes].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

export function formatScope(scopes: readonly string[]): string {
  return sortScopes(scopes).join(' ');
}

export type ScopeGrant =
  { readonly ok: true; readonly scopes: string[] } | { readonly ok: false; readonly reason: string };

/**
 * The scopes a token request gets: everything the client is allowed when it asks for nothing,
 * else exactly what it asks for, which must be a subset of what it is allowed.
 */
export function grantScopes(allowed: readonly string[], requested: string | undefined): ScopeGrant {
  if (requested === undefined) return { ok: true, scopes: sortScopes(allowed) };
  const asked = parseScope(requested);
  if (asked === null) return { ok: false, reason: 'scope must be a space-separated list of scopes' };
  const beyond = asked.filter((s) => !allowed.includes(s));
  if (beyond.length > 0) {
    return {
      ok: false,
      reason: `This client may not be granted: ${beyond.join(' ')} (allowed: ${formatScope(allowed)})`,
    };
  }
  return { ok: true, scopes: asked };
}

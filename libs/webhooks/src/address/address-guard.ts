import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * Server-side request forgery guard for webhook URLs. Only globally routable unicast addresses
 * pass, unless the operator allows private networks (test receivers on loopback).
 *
 * ipaddr.js classifies each address into its IANA special-purpose range (loopback, private,
 * linkLocal, carrierGradeNat, multicast, reserved, unspecified, ipv4Mapped, uniqueLocal, 6to4,
 * teredo, …); anything but `unicast` is refused, which is stricter and better maintained than a
 * hand-written CIDR list. 169.254.169.254 (cloud metadata) is link-local, so it is covered too.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address) || isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  return parsed.range() === 'unicast';
}

export type UrlProblem =
  | { readonly code: 'invalid'; readonly message: string }
  | { readonly code: 'not_https'; readonly message: string }
  | { readonly code: 'not_public'; readonly message: string };

export const HTTPS_REQUIRED = 'The URL must use HTTPS (https://…): plain http is not allowed';

/**
 * Checks what can be checked without DNS. The WHATWG parser already turns `https://2130706433/`,
 * `https://0x7f.1/` and `https://017700000001/` into `127.0.0.1`, so numeric tricks reach
 * `isPublicAddress` in their dotted form.
 */
export function checkUrlSyntax(url: string, allowPrivateNetworks: boolean): { url: URL } | { problem: UrlProblem } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: { code: 'invalid', message: 'The URL must be an absolute https:// URL' } };
  }
  if (parsed.protocol === 'http:') return { problem: { code: 'not_https', message: HTTPS_REQUIRED } };
  if (parsed.protocol !== 'https:')
    return { problem: { code: 'invalid', message: 'The URL must be an absolute https:// URL' } };
  if (parsed.username || parsed.password) {
    return { problem: { code: 'invalid', message: 'The URL must not contain credentials' } };
  }
  if (parsed.hash) return { problem: { code: 'invalid', message: 'The URL must not contain a fragment' } };
  const host = hostOf(parsed);
  if (host === '') return { problem: { code: 'invalid', message: 'The URL must name a host' } };
  if (isIP(host) !== 0 && !allowPrivateNetworks && !isPublicAddress(host)) {
    return { problem: { code: 'not_public', message: NOT_PUBLIC } };
  }
  return { url: parsed };
}

export const NOT_PUBLIC =
  'The URL must point to a public address: loopback, private, link-local and other non-public addresses are not allowed';

/** The host as a DNS name or a bare IP (IPv6 without brackets). */
export function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** Raised when a host resolves to a refused address; `code` lets the dispatcher classify it. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'ADDRESS_REFUSED';
  constructor() {
    super(NOT_PUBLIC);
  }
}

/**
 * Resolves the host and returns the address to connect to. Every resolved address must pass:
 * a name with one public and one private record could otherwise be steered to the private one.
 */
export async function resolveAllowed(
  host: string,
  resolve: Resolver,
  allowPrivateNetworks: boolean,
): Promise<ResolvedAddress> {
  const family = isIP(host);
  const addresses: readonly ResolvedAddress[] =
    family !== 0 ? [{ address: host, family: family as 4 | 6 }] : await resolve(host);
  if (addresses.length === 0) throw Object.assign(new Error('No address for the host'), { code: 'ENOTFOUND' });
  if (!allowPrivateNetworks && addresses.some((a) => !isPublicAddress(a.address))) throw new AddressRefusedError();
  return addresses[0];
}

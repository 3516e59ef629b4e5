import ipaddr from 'ipaddr.js';

/**
 * TRUST_PROXY: which peers may say, in `X-Forwarded-For` and `X-Forwarded-Proto`, who the client
 * is and whether it came over HTTPS. Off by default: the socket's address is the client's.
 * - `true`: every peer (only when nothing but the proxy can reach the service);
 * - a hop count `n`: the nearest `n` hops are proxies, whoever they are;
 * - addresses and CIDRs (and proxy-addr's names `loopback`, `linklocal`, `uniquelocal`): only a
 *   peer in that list is believed, so a caller reaching the service directly cannot choose its
 *   address. The form to prefer.
 */
export type TrustProxy =
  | { readonly kind: 'off' }
  | { readonly kind: 'all' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'addresses'; readonly addresses: readonly string[] };

/** What Fastify's `trustProxy` option receives for each form. */
export type FastifyTrustProxy = boolean | string[] | ((address: string, hop: number) => boolean);

const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];
const MAX_HOPS = 32;

/** The variable's text → the setting; throws an Error whose message says what is accepted. */
export function parseTrustProxy(text: string | undefined): TrustProxy {
  const raw = text?.trim().toLowerCase() ?? '';
  if (raw === '' || raw === 'false' || raw === 'off') return { kind: 'off' };
  if (raw === 'true') return { kind: 'all' };
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > MAX_HOPS) throw new Error(`must be a hop count from 1 to ${MAX_HOPS} (got ${raw})`);
    return { kind: 'hops', hops };
  }
  const items = raw.split(',').map((item) => item.trim());
  const bad = items.find((item) => !isAddressOrRange(item));
  if (bad !== undefined) {
    throw new Error(
      `must be true, a hop count, or comma-separated IP addresses/CIDRs (e.g. 172.30.240.0/24,10.0.0.5) (got ${JSON.stringify(bad)})`,
    );
  }
  return { kind: 'addresses', addresses: items };
}

/**
 * The setting as Fastify takes it. A hop count is given as a function: Fastify 5 turns a bare
 * number into "trust no one" for the protocol and the address, proxy-addr's `(address, hop)`
 * trust function keeps the documented meaning.
 */
export function fastifyTrustProxy(setting: TrustProxy): FastifyTrustProxy {
  switch (setting.kind) {
    case 'off':
      return false;
    case 'all':
      return true;
    case 'hops':
      return (_address, hop) => hop < setting.hops;
    case 'addresses':
      return [...setting.addresses];
  }
}

function isAddressOrRange(item: string): boolean {
  if (NAMED_RANGES.includes(item)) return true;
  if (!item.includes('/')) return ipaddr.isValid(item) && isCanonicalV4(item);
  try {
    ipaddr.parseCIDR(item);
    return isCanonicalV4(item.split('/')[0]);
  } catch {
    return false;
  }
}

/** ipaddr.js also takes `10`, `0x0a.1` and other legacy IPv4 spellings; proxy-addr does not. */
function isCanonicalV4(address: string): boolean {
  return address.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(address);
}

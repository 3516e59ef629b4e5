import Fastify from 'fastify';
import { ConfigError, loadConfig } from './config';
import { fastifyTrustProxy, parseTrustProxy } from './trust-proxy';

/** The lines of the start's refusal for this TRUST_PROXY; fails when the start goes on. */
function refusal(value: string): readonly string[] {
  expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
  try {
    loadConfig({ TRUST_PROXY: value });
  } catch (err) {
    return (err as ConfigError).problems;
  }
  return [];
}

describe('TRUST_PROXY', () => {
  it('is off unless set: the socket address is the client', () => {
    expect(loadConfig({}).trustProxy).toEqual({ kind: 'off' });
    expect(parseTrustProxy('false')).toEqual({ kind: 'off' });
    expect(fastifyTrustProxy({ kind: 'off' })).toBe(false);
  });

  it('takes true, a hop count, or addresses and CIDRs (IPv4, IPv6, proxy-addr names)', () => {
    expect(parseTrustProxy('true')).toEqual({ kind: 'all' });
    expect(parseTrustProxy('2')).toEqual({ kind: 'hops', hops: 2 });
    expect(loadConfig({ TRUST_PROXY: ' 172.30.240.0/24, 10.0.0.5,::1,fd00::/8,loopback ' }).trustProxy).toEqual({
      kind: 'addresses',
      addresses: ['172.30.240.0/24', '10.0.0.5', '::1', 'fd00::/8', 'loopback'],
    });
  });

  it('gives a hop count to Fastify as a trust function over the nearest hops', () => {
    const trust = fastifyTrustProxy({ kind: 'hops', hops: 2 });
    if (typeof trust !== 'function') throw new Error('expected a function');
    expect([0, 1, 2].map((hop) => trust('10.0.0.1', hop))).toEqual([true, true, false]);
  });

  it.each([
    // [TRUST_PROXY, peer, the client Fastify reports, its protocol]
    ['off', '127.0.0.1', '127.0.0.1', 'http'],
    ['127.0.0.1', '127.0.0.1', '198.51.100.7', 'https'],
    ['10.0.0.0/8', '10.1.2.3', '198.51.100.7', 'https'],
    ['10.0.0.0/8', '192.0.2.9', '192.0.2.9', 'http'],
    ['loopback', '127.0.0.2', '198.51.100.7', 'https'],
    ['1', '192.0.2.9', '198.51.100.7', 'https'],
    ['2', '192.0.2.9', '203.0.113.1', 'https'],
    ['true', '192.0.2.9', '203.0.113.1', 'https'],
  ])('%s: a request from %s saying X-Forwarded-For/-Proto is from %s over %s', async (setting, peer, ip, protocol) => {
    const app = Fastify({ trustProxy: fastifyTrustProxy(parseTrustProxy(setting)) });
    app.get('/', (request) => ({ ip: request.ip, protocol: request.protocol }));
    try {
      const res = await app.inject({
        url: '/',
        remoteAddress: peer,
        headers: { 'x-forwarded-for': '203.0.113.1, 198.51.100.7', 'x-forwarded-proto': 'https' },
      });
      expect(res.json()).toEqual({ ip, protocol });
    } finally {
      await app.close();
    }
  });

  it.each([
    ['yes please', 'yes please'],
    ['0', 'hop count from 1'],
    ['10.0.0.300', '10.0.0.300'],
    ['10.0.0.0/33', '10.0.0.0/33'],
    ['10.0.0.1,', '""'],
    ['100', 'hop count from 1 to 32'],
    ['0x0a.0.0.1', '0x0a.0.0.1'],
    ['caddy', 'caddy'],
  ])('stops the start on %j, naming the variable and the bad item', (value, named) => {
    const problems = refusal(value);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^TRUST_PROXY /);
    expect(problems[0]).toContain(named);
  });
});

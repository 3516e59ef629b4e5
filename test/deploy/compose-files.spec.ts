/**
 * The shipped deployment files, checked as text: docker-compose.yml runs a closed event store (TLS,
 * authentication, no node port beyond loopback, no default SECRETS_KEY, TRUST_PROXY naming the
 * edge), docker-compose.single.yml publishes on loopback only, deploy/Caddyfile serves HTTPS
 * only. Each rule is also shown to fail on a broken copy of the real file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { caddyfileProblems, clusterComposeProblems, developmentComposeProblems } from './deploy-checks';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const CLUSTER = read('docker-compose.yml');
const SINGLE = read('docker-compose.single.yml');
const CADDYFILE = read('deploy/Caddyfile');

/** The file with every `from` replaced; `from` must be there, so a renamed line fails here, not silently. */
function variant(text: string, from: string | RegExp, to: string): string {
  const changed = text.replace(typeof from === 'string' ? new RegExp(escape(from), 'g') : from, to);
  expect(changed).not.toBe(text);
  return changed;
}
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the shipped deployment files', () => {
  it('pass every check as shipped', () => {
    expect(clusterComposeProblems(CLUSTER)).toEqual([]);
    expect(developmentComposeProblems(SINGLE)).toEqual([]);
    expect(caddyfileProblems(CADDYFILE)).toEqual([]);
  });

  describe('docker-compose.yml', () => {
    const problems = (from: string | RegExp, to: string) => clusterComposeProblems(variant(CLUSTER, from, to));

    it('fails on an insecure node, or one without its certificate', () => {
      expect(problems(/^( *)EVENTSTORE_DISCOVER_VIA_DNS: "false"$/m, '$1EVENTSTORE_INSECURE: "true"')).toEqual(
        ['esdb-node1', 'esdb-node2', 'esdb-node3'].map((node) =>
          expect.stringMatching(`^${node}: EVENTSTORE_INSECURE`),
        ),
      );
      expect(problems(/^ *EVENTSTORE_CERTIFICATE_FILE: \/certs\/node2\/node\.crt\n/m, '')).toEqual([
        expect.stringMatching(/^esdb-node2: EVENTSTORE_CERTIFICATE_FILE is not set/),
      ]);
      // The insecure development file is no cluster to ship.
      expect(clusterComposeProblems(SINGLE)).toEqual(
        expect.arrayContaining([expect.stringMatching(/EVENTSTORE_INSECURE/)]),
      );
    });

    it('fails on the store admin password left at a default', () => {
      expect(
        problems(/EVENTSTORE_DEFAULT_ADMIN_PASSWORD: .*$/m, 'EVENTSTORE_DEFAULT_ADMIN_PASSWORD: changeit'),
      ).toEqual(
        ['esdb-node1', 'esdb-node2', 'esdb-node3'].map((node) =>
          expect.stringMatching(`^${node}: EVENTSTORE_DEFAULT_ADMIN_PASSWORD`),
        ),
      );
    });

    it.each([
      ['on every interface', '"127.0.0.1:2111:2113"', '"2111:2113"'],
      ['on 0.0.0.0', '"127.0.0.1:2111:2113"', '"0.0.0.0:2111:2113"'],
      ['on a random host port', '"127.0.0.1:2111:2113"', '"2113"'],
      ['in the long syntax without host_ip', '["127.0.0.1:2111:2113"]', '[{ target: 2113, published: 2111 }]'],
    ])('fails on a node port published beyond loopback (%s)', (_, from, to) => {
      expect(problems(from, to)).toEqual([
        expect.stringMatching(/^esdb-node1: port .* is published beyond 127\.0\.0\.1$/),
      ]);
    });

    it.each([
      ['tls=false', 'tls=true&', 'tls=false&', /without tls=true/],
      ['no tls option', 'tls=true&', '', /without tls=true/],
      ['certificate checks off', 'nodePreference=leader', 'nodePreference=leader&tlsVerifyCert=false', /tlsVerifyCert/],
      ['no credentials', 'esdb://admin:${ESDB_PASSWORD:?set ESDB_PASSWORD}@', 'esdb://', /without credentials/],
      ['a password in the file', '${ESDB_PASSWORD:?set ESDB_PASSWORD}@', 'changeit@', /without credentials/],
    ])('fails on a connection string with %s', (_, from, to, problem) => {
      expect(problems(from, to)).toEqual(['service-1', 'service-2'].map(() => expect.stringMatching(problem)));
    });

    it.each([
      ['a default', /\$\{SECRETS_KEY:\?[^}]*\}/, '${SECRETS_KEY:-ZGVtby1vbmx5LWtleS1kby1ub3QtdXNlLWluLXByb2Q=}'],
      ['a value in the file', /\$\{SECRETS_KEY:\?[^}]*\}/, 'ZGVtby1vbmx5LWtleS1kby1ub3QtdXNlLWluLXByb2Q='],
      ['none at all', /^ *SECRETS_KEY: .*\n/m, ''],
    ])('fails on SECRETS_KEY with %s', (_, from, to) => {
      expect(problems(from, to)).toEqual(
        ['service-1', 'service-2'].map((s) => expect.stringMatching(`^${s}: SECRETS_KEY`)),
      );
    });

    it('fails on TRUST_PROXY missing, off, or not naming the edge', () => {
      for (const to of ['', '    TRUST_PROXY: "false"\n', '    TRUST_PROXY: 172.30.241.0/24\n']) {
        expect(problems(/^ *TRUST_PROXY: .*\n/m, to)).toEqual(
          ['service-1', 'service-2'].map((s) => expect.stringMatching(`^${s}: TRUST_PROXY`)),
        );
      }
      // The network's range, or the edge's own address: both name it.
      expect(problems(/^( *)TRUST_PROXY: .*$/m, '$1TRUST_PROXY: 172.30.240.0/24')).toEqual([]);
    });

    it('fails on an edge without HTTPS: port 443 missing, or a plain-HTTP SITE_ADDRESS', () => {
      expect(problems('"443:443", ', '')).toEqual([expect.stringMatching(/^load-balancer: port 443 is not published/)]);
      expect(problems('${SITE_ADDRESS:-localhost}', '${SITE_ADDRESS:-http://localhost}')).toEqual([
        expect.stringMatching(/^load-balancer: SITE_ADDRESS "http:\/\/localhost" over plain HTTP/),
      ]);
    });
  });

  describe('docker-compose.single.yml', () => {
    it.each([
      ['the node', '"127.0.0.1:2113:2113"', '"2113:2113"', 'eventstore'],
      ['the service', '"127.0.0.1:3000:3000"', '"0.0.0.0:3000:3000"', 'service'],
    ])('fails on %s published beyond loopback', (_, from, to, service) => {
      expect(developmentComposeProblems(variant(SINGLE, from, to))).toEqual([
        expect.stringMatching(`^${service}: port .* is published beyond 127\\.0\\.0\\.1$`),
      ]);
    });
  });

  describe('deploy/Caddyfile', () => {
    const SITE = '{$SITE_ADDRESS:localhost} {';
    it.each([
      ['a bare port (the old :3000)', SITE, ':3000 {'],
      ['an http:// address', SITE, 'http://{$SITE_ADDRESS:localhost} {'],
      ['an http:// default', SITE, '{$SITE_ADDRESS:http://localhost} {'],
      ['port 80', SITE, 'localhost:80 {'],
    ])('fails on a site served over plain HTTP: %s', (_, from, to) => {
      expect(caddyfileProblems(variant(CADDYFILE, from, to))).toEqual([expect.stringMatching(/over plain HTTP/)]);
    });

    it('fails on automatic HTTPS turned off, or without its redirects', () => {
      for (const setting of ['off', 'disable_redirects']) {
        const withGlobal = `{\n\tauto_https ${setting}\n}\n${CADDYFILE}`;
        expect(caddyfileProblems(withGlobal)).toEqual([expect.stringMatching(/auto_https/)]);
      }
    });

    it('fails without HSTS', () => {
      expect(caddyfileProblems(variant(CADDYFILE, /^\s*header Strict-Transport-Security.*\n/m, ''))).toEqual([
        expect.stringMatching(/Strict-Transport-Security/),
      ]);
    });
  });
});

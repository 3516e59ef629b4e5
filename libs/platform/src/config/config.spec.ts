import { transformFileSync } from '@swc/core';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, directoryProblem, loadConfig, parseDurations, parseRateLimit } from './config';

const SECRETS_KEY = Buffer.alloc(32, 0x5a).toString('base64');

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadConfig', () => {
  it('defaults to the embedded sqlite store on port 3000 with the contract defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.eventStore.kind).toBe('sqlite');
    expect(config.dataDir).toMatch(/data$/);
    expect(config.tokenTtlSeconds).toBe(3600);
    expect(config.webhookTimeoutMs).toBe(10_000);
    expect(config.webhookRetryDelaysMs).toEqual([
      10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
    ]);
    expect(config.webhookAllowPrivateNetworks).toBe(false);
    expect(config.tls).toBeNull();
    expect(config.apiRateLimit).toEqual({ limit: 100, windowMs: 1_000 });
    expect(config.webhookDisableAfterMs).toBe(5 * 86_400_000);
  });

  it('reads WEBHOOK_DISABLE_AFTER as one duration and names it when it is not one', () => {
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '2s' }).webhookDisableAfterMs).toBe(2_000);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '3d' }).webhookDisableAfterMs).toBe(3 * 86_400_000);
    for (const bad of ['5', '1d,2d', '0s', '-1h', '5 days', '366d']) {
      expect(problemsOf({ WEBHOOK_DISABLE_AFTER: bad })).toEqual([
        expect.stringMatching(/^WEBHOOK_DISABLE_AFTER must be one duration with a unit/),
      ]);
    }
  });

  it('reads READY_MAX_LAG (log positions; by default 10,000 with sqlite, 16 MB of log with esdb) and names a bad one', () => {
    expect(loadConfig({}).readyMaxLag).toBe(10_000);
    expect(loadConfig({ READY_MAX_LAG: '500' }).readyMaxLag).toBe(500);
    const esdb = { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', SECRETS_KEY };
    expect(loadConfig(esdb).readyMaxLag).toBe(16_000_000);
    for (const bad of ['-1', 'lots', '1e3']) {
      expect(problemsOf({ READY_MAX_LAG: bad })).toEqual([
        expect.stringMatching(/^READY_MAX_LAG must be a whole number/),
      ]);
    }
  });

  it('reads the webhook endpoint cap and the claim clock skew, within their ranges', () => {
    expect(loadConfig({}).webhookMaxEndpointsPerAccount).toBe(16);
    expect(loadConfig({ WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: '3' }).webhookMaxEndpointsPerAccount).toBe(3);
    for (const bad of ['0', '1001', 'many']) {
      expect(problemsOf({ WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: bad })).toEqual([
        expect.stringMatching(/^WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT /),
      ]);
    }
    expect(loadConfig({}).webhookClaimClockSkewMs).toBe(1_000);
    expect(loadConfig({ WEBHOOK_CLAIM_CLOCK_SKEW_MS: '0' }).webhookClaimClockSkewMs).toBe(0);
    for (const bad of ['-1', '2001', '1s']) {
      expect(problemsOf({ WEBHOOK_CLAIM_CLOCK_SKEW_MS: bad })).toEqual([
        expect.stringMatching(/^WEBHOOK_CLAIM_CLOCK_SKEW_MS /),
      ]);
    }
  });

  it('reads WEBHOOK_FAILING_AFTER (default 1 h) as one duration and names it when it is not one', () => {
    expect(loadConfig({}).webhookFailingAfterMs).toBe(3_600_000);
    expect(loadConfig({ WEBHOOK_FAILING_AFTER: '30m' }).webhookFailingAfterMs).toBe(1_800_000);
    for (const bad of ['1', '0s', '1h,2h', '366d']) {
      expect(problemsOf({ WEBHOOK_FAILING_AFTER: bad })).toEqual([
        expect.stringMatching(/^WEBHOOK_FAILING_AFTER must be one duration with a unit/),
      ]);
    }
  });

  it('names each bad variable, all of them at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      EVENT_STORE: 'postgres',
      TOKEN_TTL_SECONDS: '7200',
      WEBHOOK_RETRY_DELAYS: '10,1m',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe',
      WEBHOOK_CA_FILE: '/nonexistent/ca.pem',
      API_RATE_LIMIT: 'lots',
      WEBHOOK_DISABLE_AFTER: 'soon',
    });
    const text = problems.join('\n');
    for (const name of [
      'PORT',
      'EVENT_STORE',
      'TOKEN_TTL_SECONDS',
      'WEBHOOK_RETRY_DELAYS',
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
      'WEBHOOK_CA_FILE',
      'API_RATE_LIMIT',
      'WEBHOOK_DISABLE_AFTER',
    ]) {
      expect(text).toContain(name);
    }
    expect(problems).toHaveLength(8);
  });

  it('requires a connection string for esdb', () => {
    expect(problemsOf({ EVENT_STORE: 'esdb', SECRETS_KEY })).toEqual([
      expect.stringContaining('EVENTSTORE_CONNECTION_STRING'),
    ]);
    const config = loadConfig({
      EVENT_STORE: 'esdb',
      EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false',
      SECRETS_KEY,
    });
    expect(config.eventStore).toMatchObject({ kind: 'esdb', connectionString: 'esdb://localhost:2113?tls=false' });
  });

  describe('SECRETS_KEY and SECRETS_KEY_PREVIOUS', () => {
    const esdb = { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false' };

    it('requires SECRETS_KEY with esdb, where every instance must share it', () => {
      expect(problemsOf(esdb)).toEqual([
        'SECRETS_KEY is required when EVENT_STORE=esdb, the same on every instance: base64 of exactly 32 random bytes, e.g. from `openssl rand -base64 32`',
      ]);
    });

    it('takes base64 or base64url of 32 bytes; with sqlite it may be left out (DATA_DIR/cursor.key stands in)', () => {
      expect(loadConfig({ ...esdb, SECRETS_KEY }).secretsKey?.source).toBe('secrets-key');
      const urlSafe = Buffer.alloc(32, 0xfb).toString('base64url');
      expect(loadConfig({ SECRETS_KEY: urlSafe }).secretsKey?.derive('p')).toEqual(
        loadConfig({ SECRETS_KEY: Buffer.alloc(32, 0xfb).toString('base64') }).secretsKey?.derive('p'),
      );
      expect(loadConfig({}).secretsKey).toBeNull();
    });

    it('the keys come from the values: the same SECRETS_KEY derives the same keys, SECRETS_KEY_PREVIOUS opens what it sealed', () => {
      const previous = Buffer.alloc(32, 5).toString('base64');
      const sealed = loadConfig({ SECRETS_KEY: previous }).secretsKey!.secretBox().seal('whsec_x');
      const rotated = loadConfig({ SECRETS_KEY, SECRETS_KEY_PREVIOUS: previous }).secretsKey!;
      expect(rotated.secretBox().open(sealed)).toBe('whsec_x');
      expect(rotated.derive('p')).toEqual(loadConfig({ SECRETS_KEY }).secretsKey!.derive('p'));
    });

    it.each([
      ['not base64', 'not base64!', 'it is not base64'],
      ['16 bytes', Buffer.alloc(16, 1).toString('base64'), 'it decodes to 16 bytes'],
      ['33 bytes', Buffer.alloc(33, 1).toString('base64'), 'it decodes to 33 bytes'],
      ['a hex key', 'ab'.repeat(32), 'it decodes to 48 bytes'],
      ['base64 with junk inside', `${SECRETS_KEY.slice(0, 20)}%${SECRETS_KEY.slice(20)}`, 'it is not base64'],
    ])('refuses %s, naming the variable and never the value', (_, text, why) => {
      for (const name of ['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']) {
        const env =
          name === 'SECRETS_KEY'
            ? { ...esdb, SECRETS_KEY: text }
            : { ...esdb, SECRETS_KEY, SECRETS_KEY_PREVIOUS: text };
        const problems = problemsOf(env);
        expect(problems).toEqual([
          `${name} must be base64 of exactly 32 random bytes, e.g. from \`openssl rand -base64 32\` (${why})`,
        ]);
        expect(problems[0]).not.toContain(text);
      }
    });

    it('refuses SECRETS_KEY_PREVIOUS alone', () => {
      expect(problemsOf({ SECRETS_KEY_PREVIOUS: SECRETS_KEY })).toEqual([
        'SECRETS_KEY_PREVIOUS is set without SECRETS_KEY: set SECRETS_KEY to the new key',
      ]);
    });
  });

  it.each([
    ['esdb://', 'EVENTSTORE_CONNECTION_STRING names no host (e.g. esdb://localhost:2113?tls=false)'],
    [
      'esdb://host:2113?tls=maybe',
      'EVENTSTORE_CONNECTION_STRING is not a valid connection string: Unexpected "maybe" at position 21, expected true or false (e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'esdb://local host:2113',
      'EVENTSTORE_CONNECTION_STRING has a host that is not a host name or IPv4 address: "local host:2113"',
    ],
  ])(
    "names EVENTSTORE_CONNECTION_STRING and what is wrong with %j (the client's own parser, no connection)",
    (text, problem) => {
      expect(problemsOf({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: text, SECRETS_KEY })).toEqual([problem]);
    },
  );

  it('requires TLS certificate and key together', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    try {
      writeFileSync(join(dir, 'cert.pem'), 'x');
      expect(problemsOf({ TLS_CERT_FILE: join(dir, 'cert.pem') })).toEqual([expect.stringContaining('TLS_KEY_FILE')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadConfig: files and directories', () => {
  // Real PEM files, made with the openssl CLI like test/support/tls-certs.ts (EC P-256: fast).
  let dir: string;
  const p = (name: string) => join(dir, name);
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cfg-files-'));
    const selfSigned = (name: string) =>
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          p(`${name}.key`),
          '-out',
          p(`${name}.crt`),
          '-days',
          '2',
          '-subj',
          `/CN=${name}`,
        ],
        { stdio: 'pipe' },
      );
    selfSigned('a');
    selfSigned('b');
    writeFileSync(p('bundle.crt'), readFileSync(p('a.crt'), 'utf8') + readFileSync(p('b.crt'), 'utf8'));
    writeFileSync(
      p('broken.crt'),
      `${readFileSync(p('a.crt'), 'utf8')}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
    );
    writeFileSync(p('text.txt'), 'my-hostname\n');
    execFileSync(
      'openssl',
      ['pkey', '-in', p('a.key'), '-out', p('encrypted.key'), '-aes256', '-passout', 'pass:secret'],
      { stdio: 'pipe' },
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('WEBHOOK_CA_FILE', () => {
    it('takes a PEM bundle of one or more certificates', () => {
      expect(loadConfig({ WEBHOOK_CA_FILE: p('a.crt') }).webhookCaFile).toBe(p('a.crt'));
      expect(loadConfig({ WEBHOOK_CA_FILE: p('bundle.crt') }).webhookCaFile).toBe(p('bundle.crt'));
    });
    it('refuses a file that is not PEM certificates, which Node would silently ignore', () => {
      expect(problemsOf({ WEBHOOK_CA_FILE: p('text.txt') })).toEqual([
        `WEBHOOK_CA_FILE names a file that holds no PEM certificate (-----BEGIN CERTIFICATE-----): ${p('text.txt')}`,
      ]);
      expect(problemsOf({ WEBHOOK_CA_FILE: p('a.key') })).toEqual([
        expect.stringMatching(/^WEBHOOK_CA_FILE .*no PEM certificate.*\(it holds a private key\)$/),
      ]);
      expect(problemsOf({ WEBHOOK_CA_FILE: p('broken.crt') })).toEqual([
        expect.stringMatching(/^WEBHOOK_CA_FILE names a file whose certificate 2 of 2 does not parse: /),
      ]);
      expect(problemsOf({ WEBHOOK_CA_FILE: dir })).toEqual([
        `WEBHOOK_CA_FILE names a file that cannot be read: ${dir} (EISDIR)`,
      ]);
    });
  });

  describe('TLS_CERT_FILE and TLS_KEY_FILE', () => {
    it('takes a certificate (or a chain, leaf first) with its own key', () => {
      expect(loadConfig({ TLS_CERT_FILE: p('a.crt'), TLS_KEY_FILE: p('a.key') }).tls).toEqual({
        certFile: p('a.crt'),
        keyFile: p('a.key'),
      });
      expect(loadConfig({ TLS_CERT_FILE: p('bundle.crt'), TLS_KEY_FILE: p('a.key') }).tls).not.toBeNull();
    });
    it('says when the two are swapped', () => {
      expect(problemsOf({ TLS_CERT_FILE: p('a.key'), TLS_KEY_FILE: p('a.crt') })).toEqual([
        `TLS_CERT_FILE and TLS_KEY_FILE are swapped: the certificate is in ${p('a.crt')}, the key file, and not in ${p('a.key')}`,
      ]);
    });
    it('names each file that does not parse', () => {
      expect(problemsOf({ TLS_CERT_FILE: p('text.txt'), TLS_KEY_FILE: p('text.txt') })).toEqual([
        `TLS_CERT_FILE names a file that holds no PEM certificate (-----BEGIN CERTIFICATE-----): ${p('text.txt')}`,
        expect.stringMatching(
          /^TLS_KEY_FILE names a file that holds no usable PEM private key \(it must not be encrypted\): /,
        ),
      ]);
      expect(problemsOf({ TLS_CERT_FILE: p('a.crt'), TLS_KEY_FILE: p('encrypted.key') })).toEqual([
        expect.stringMatching(/^TLS_KEY_FILE names a file that holds no usable PEM private key/),
      ]);
    });
    it("refuses a key that is not the certificate's", () => {
      expect(problemsOf({ TLS_CERT_FILE: p('a.crt'), TLS_KEY_FILE: p('b.key') })).toEqual([
        expect.stringMatching(
          /^TLS_CERT_FILE and TLS_KEY_FILE do not belong together: the key in .*b\.key is not the key of the certificate in .*a\.crt/,
        ),
      ]);
      // A chain whose first certificate is not the key's.
      writeFileSync(p('wrong-order.crt'), readFileSync(p('b.crt'), 'utf8') + readFileSync(p('a.crt'), 'utf8'));
      expect(problemsOf({ TLS_CERT_FILE: p('wrong-order.crt'), TLS_KEY_FILE: p('a.key') })).toEqual([
        expect.stringContaining('do not belong together'),
      ]);
    });
  });

  describe('DATA_DIR', () => {
    it('takes an existing writable directory, or a new one under a writable directory (not made here)', () => {
      expect(loadConfig({ DATA_DIR: dir }).dataDir).toBe(dir);
      expect(loadConfig({ DATA_DIR: p('new/deeper') }).dataDir).toBe(p('new/deeper'));
      expect(readdirSync(dir)).not.toContain('new');
      expect(readdirSync(dir).filter((name) => name.startsWith('.write-check-'))).toEqual([]);
    });
    it('refuses a file, or a path under a file', () => {
      expect(problemsOf({ DATA_DIR: p('text.txt') })).toEqual([
        `DATA_DIR must be a directory, but ${p('text.txt')} is a file`,
      ]);
      expect(problemsOf({ DATA_DIR: p('text.txt/data') })).toEqual([
        `DATA_DIR cannot be created: ${p('text.txt/data')} does not exist, and its nearest existing parent ${p('text.txt')} is a file, not a directory`,
      ]);
    });
    it('refuses a dangling symbolic link', () => {
      symlinkSync(p('nowhere'), p('dangling'));
      expect(problemsOf({ DATA_DIR: p('dangling') })).toEqual([
        `DATA_DIR is a symbolic link to a path that does not exist: ${p('dangling')}`,
      ]);
      expect(problemsOf({ DATA_DIR: p('dangling/data') })).toEqual([
        expect.stringContaining('is a symbolic link to a path that does not exist, not a directory'),
      ]);
    });
    // The service runs on Linux (Dockerfile, CI), where /proc always exists.
    it('refuses a place under /proc, where the recursive mkdir at start would spin forever', () => {
      expect(problemsOf({ DATA_DIR: '/proc/nonexistent/x' })).toEqual([
        'DATA_DIR cannot be created: /proc/nonexistent/x does not exist, and its nearest existing parent /proc takes no new directories (making a directory there fails with ENOENT)',
      ]);
    });
    it('refuses a directory it cannot write in', () => {
      mkdirSync(p('read-only'));
      chmodSync(p('read-only'), 0o555);
      // Root may write anywhere: then the check runs in a child process as `nobody`, on a compiled
      // copy of directory-check.ts in this world-readable directory. That user may not be able to
      // read the checkout (a clone under a 0700 `mktemp -d` or /root) nor its node_modules.
      const problems = (dirs: string[]): Array<string | null> => {
        if (process.getuid?.() !== 0) return dirs.map(directoryProblem);
        chmodSync(dir, 0o755);
        const { code } = transformFileSync(join(__dirname, 'directory-check.ts'), {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
          module: { type: 'commonjs' },
        });
        writeFileSync(p('directory-check.js'), code);
        const script = `const { directoryProblem } = require(${JSON.stringify(p('directory-check.js'))}); process.stdout.write(JSON.stringify(${JSON.stringify(dirs)}.map(directoryProblem)))`;
        return JSON.parse(
          execFileSync(process.execPath, ['-e', script], { uid: 65534, gid: 65534, cwd: dir }).toString(),
        );
      };
      const [own, below] = problems([p('read-only'), p('read-only/data')]);
      expect(own).toBe(`names a directory this process cannot write in: ${p('read-only')} (no write access: EACCES)`);
      expect(below).toMatch(/takes no new directories \(no write access: EACCES\)$/);
    }, 30_000);
  });
});

describe('parseDurations', () => {
  it('reads units ms, s, m, h, d', () => {
    expect(parseDurations('5ms, 2s,3m,1h,2d')).toEqual([5, 2_000, 180_000, 3_600_000, 172_800_000]);
  });
  it.each(['', '10', '1w', '1m,,2m', '-1s', '1.5d'])('refuses %j', (text) => {
    expect(() => parseDurations(text)).toThrow();
  });
});

describe('parseRateLimit', () => {
  it('reads requests per window, or off', () => {
    expect(parseRateLimit('100/1s')).toEqual({ limit: 100, windowMs: 1_000 });
    expect(parseRateLimit('6000 / 1m')).toEqual({ limit: 6_000, windowMs: 60_000 });
    expect(parseRateLimit('OFF')).toBeNull();
  });
  it.each(['100', '/1s', '0/1s', '100/0s', '100/1d', '100/2h', '1.5/1s', 'unlimited'])('refuses %j', (text) => {
    expect(() => parseRateLimit(text)).toThrow(/100\/1s/);
  });
});

describe('PUBLIC_URL', () => {
  it('is unset by default: the discovery metadata then names localhost', () => {
    expect(loadConfig({}).publicUrl).toBeNull();
  });

  it('takes an http or https origin, kept without a trailing slash', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://API.Example.com:8443' }).publicUrl).toBe('https://api.example.com:8443');
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).publicUrl).toBe('http://localhost:3000');
  });

  it.each([
    'api.example.com',
    'ftp://api.example.com',
    'https://api.example.com/v1',
    'https://api.example.com/?x=1',
    'https://api.example.com/#top',
    'https://user:pass@api.example.com',
    'https://',
  ])('refuses %s, naming the variable', (value) => {
    expect(problemsOf({ PUBLIC_URL: value })).toEqual([expect.stringMatching(/^PUBLIC_URL must be the origin/)]);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseDurations, parseRateLimit } from './config';

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
    });
    const text = problems.join('\n');
    for (const name of ['PORT', 'EVENT_STORE', 'TOKEN_TTL_SECONDS', 'WEBHOOK_RETRY_DELAYS', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_CA_FILE', 'API_RATE_LIMIT']) {
      expect(text).toContain(name);
    }
    expect(problems).toHaveLength(7);
  });

  it('requires a connection string for esdb', () => {
    expect(problemsOf({ EVENT_STORE: 'esdb' })).toEqual([expect.stringContaining('EVENTSTORE_CONNECTION_STRING')]);
    const config = loadConfig({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false' });
    expect(config.eventStore).toMatchObject({ kind: 'esdb', connectionString: 'esdb://localhost:2113?tls=false' });
  });

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

describe('parseDurations', () => {
  it('reads units ms, s, m, h', () => {
    expect(parseDurations('5ms, 2s,3m,1h')).toEqual([5, 2_000, 180_000, 3_600_000]);
  });
  it.each(['', '10', '1d', '1m,,2m', '-1s'])('refuses %j', (text) => {
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

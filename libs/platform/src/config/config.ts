import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { connectionStringProblem } from '@filing/event-store';
import { directoryProblem, errorCode } from './directory-check';

export { directoryProblem } from './directory-check';
import { ServiceKeys } from '../crypto/service-keys';

/** The service's configuration, read from environment variables (CONTRACT.md §6). */
export interface AppConfig {
  readonly port: number;
  readonly eventStore:
    | { readonly kind: 'sqlite'; readonly dataDir: string }
    | { readonly kind: 'esdb'; readonly connectionString: string; readonly dataDir: string };
  /** Read models (`read.db`) live here whichever store holds the events. */
  readonly dataDir: string;
  readonly tokenTtlSeconds: number;
  readonly webhookRetryDelaysMs: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly webhookAllowPrivateNetworks: boolean;
  readonly webhookCaFile: string | null;
  /** An endpoint whose attempts have all failed for this long is disabled (reason `failing`). */
  readonly webhookDisableAfterMs: number;
  /** An endpoint whose attempts have all failed for this long gets `webhook_endpoint.failing` sent (once per streak). */
  readonly webhookFailingAfterMs: number;
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Requests per account to `/external-api/v1` in a sliding window; null: unlimited (`off`). */
  readonly apiRateLimit: { readonly limit: number; readonly windowMs: number } | null;
  /**
   * The root of every service key, from `SECRETS_KEY` (and `SECRETS_KEY_PREVIOUS`, still accepted
   * for opening and checking): required with esdb, where every instance must hold the same one.
   * null: not set (sqlite only); `DATA_DIR/cursor.key` is the root then.
   */
  readonly secretsKey: ServiceKeys | null;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Thrown when any variable is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export const DEFAULT_RETRY_DELAYS = '10s,1m,5m,30m,2h,6h,12h,24h';
export const DEFAULT_API_RATE_LIMIT = '100/1s';
export const DEFAULT_WEBHOOK_DISABLE_AFTER = '5d';
export const DEFAULT_WEBHOOK_FAILING_AFTER = '1h';
/** A longer WEBHOOK_DISABLE_AFTER is more likely a typo than a wish. */
const MAX_DISABLE_AFTER_MS = 365 * 86_400_000;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Validates the environment; collects every problem before failing so one start shows them all. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const value = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return Number(raw);
  };
  const boolean = (name: string): boolean => {
    const raw = value(name)?.toLowerCase();
    if (raw === undefined) return false;
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false (got ${JSON.stringify(raw)})`);
    return false;
  };
  const file = (name: string): string | null => {
    const raw = value(name);
    if (raw === undefined) return null;
    if (!existsSync(raw)) {
      problems.push(`${name} names a file that does not exist: ${raw}`);
      return null;
    }
    return resolve(raw);
  };

  const port = integer('PORT', 3000, 0, 65535);
  const dataDir = resolve(value('DATA_DIR') ?? './data');
  const dataDirProblem = directoryProblem(dataDir);
  if (dataDirProblem) problems.push(`DATA_DIR ${dataDirProblem}`);
  const storeKind = value('EVENT_STORE') ?? 'sqlite';
  let eventStore: AppConfig['eventStore'] = { kind: 'sqlite', dataDir };
  if (storeKind === 'esdb') {
    const connectionString = value('EVENTSTORE_CONNECTION_STRING');
    if (!connectionString) {
      problems.push(
        'EVENTSTORE_CONNECTION_STRING is required when EVENT_STORE=esdb (e.g. esdb://localhost:2113?tls=false)',
      );
    } else {
      const problem = connectionStringProblem(connectionString);
      if (problem) problems.push(`EVENTSTORE_CONNECTION_STRING ${problem}`);
    }
    eventStore = { kind: 'esdb', connectionString: connectionString ?? '', dataDir };
  } else if (storeKind !== 'sqlite') {
    problems.push(`EVENT_STORE must be sqlite or esdb (got ${JSON.stringify(storeKind)})`);
  }

  let webhookRetryDelaysMs: number[] = [];
  try {
    webhookRetryDelaysMs = parseDurations(value('WEBHOOK_RETRY_DELAYS') ?? DEFAULT_RETRY_DELAYS);
  } catch (err) {
    problems.push(`WEBHOOK_RETRY_DELAYS ${(err as Error).message}`);
  }

  let webhookDisableAfterMs = 0;
  try {
    webhookDisableAfterMs = parseDuration(
      value('WEBHOOK_DISABLE_AFTER') ?? DEFAULT_WEBHOOK_DISABLE_AFTER,
      MAX_DISABLE_AFTER_MS,
    );
  } catch (err) {
    problems.push(`WEBHOOK_DISABLE_AFTER ${(err as Error).message}`);
  }
  let webhookFailingAfterMs = 0;
  try {
    webhookFailingAfterMs = parseDuration(
      value('WEBHOOK_FAILING_AFTER') ?? DEFAULT_WEBHOOK_FAILING_AFTER,
      MAX_DISABLE_AFTER_MS,
    );
  } catch (err) {
    problems.push(`WEBHOOK_FAILING_AFTER ${(err as Error).message}`);
  }

  const certFile = file('TLS_CERT_FILE');
  const keyFile = file('TLS_KEY_FILE');
  if (Boolean(value('TLS_CERT_FILE')) !== Boolean(value('TLS_KEY_FILE'))) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  } else if (certFile && keyFile) {
    problems.push(...tlsPairProblems(certFile, keyFile));
  }

  let apiRateLimit: AppConfig['apiRateLimit'] = null;
  try {
    apiRateLimit = parseRateLimit(value('API_RATE_LIMIT') ?? DEFAULT_API_RATE_LIMIT);
  } catch (err) {
    problems.push(`API_RATE_LIMIT ${(err as Error).message}`);
  }

  const secretsKey = secretsKeyFrom(
    value('SECRETS_KEY'),
    value('SECRETS_KEY_PREVIOUS'),
    storeKind === 'esdb',
    problems,
  );

  const logLevel = (value('LOG_LEVEL') ?? 'info') as AppConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const webhookCaFile = file('WEBHOOK_CA_FILE');
  if (webhookCaFile) {
    const problem = certificatesProblem(webhookCaFile);
    if (problem) problems.push(`WEBHOOK_CA_FILE ${problem}`);
  }

  const config: AppConfig = {
    port,
    eventStore,
    dataDir,
    tokenTtlSeconds: integer('TOKEN_TTL_SECONDS', 3600, 1, 3600),
    webhookRetryDelaysMs,
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 1, 120_000),
    webhookAllowPrivateNetworks: boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS'),
    webhookCaFile,
    webhookDisableAfterMs,
    webhookFailingAfterMs,
    tls: certFile && keyFile ? { certFile, keyFile } : null,
    logLevel,
    apiRateLimit,
    secretsKey,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The PEM certificates in `file`, or why there are none / one does not parse. */
function readCertificates(file: string): X509Certificate[] | string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    return `names a file that cannot be read: ${file} (${errorCode(err)})`;
  }
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    const hint = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem) ? ' (it holds a private key)' : '';
    return `names a file that holds no PEM certificate (-----BEGIN CERTIFICATE-----): ${file}${hint}`;
  }
  const certificates: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch (err) {
      const which = blocks.length > 1 ? `certificate ${i + 1} of ${blocks.length}` : 'the certificate';
      return `names a file whose ${which} does not parse: ${file} (${(err as Error).message})`;
    }
  }
  return certificates;
}

/** Node's TLS quietly skips whatever in a CA file is not a PEM certificate: refuse such a file. */
function certificatesProblem(file: string): string | null {
  const certificates = readCertificates(file);
  return typeof certificates === 'string' ? certificates : null;
}

/** The HTTPS certificate (chain, leaf first) and its private key: each parses, and they match. */
function tlsPairProblems(certFile: string, keyFile: string): string[] {
  const certificates = readCertificates(certFile);
  const key = readPrivateKey(keyFile);
  if (typeof certificates === 'string' && typeof key === 'string' && Array.isArray(readCertificates(keyFile))) {
    return [
      `TLS_CERT_FILE and TLS_KEY_FILE are swapped: the certificate is in ${keyFile}, the key file, and not in ${certFile}`,
    ];
  }
  const problems: string[] = [];
  if (typeof certificates === 'string') problems.push(`TLS_CERT_FILE ${certificates}`);
  if (typeof key === 'string') problems.push(`TLS_KEY_FILE ${key}`);
  if (typeof certificates !== 'string' && typeof key !== 'string' && !certificates[0].checkPrivateKey(key)) {
    problems.push(
      `TLS_CERT_FILE and TLS_KEY_FILE do not belong together: the key in ${keyFile} is not the key of the certificate in ${certFile} (the first certificate there must be the server's own)`,
    );
  }
  return problems;
}

function readPrivateKey(file: string): KeyObject | string {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    return `names a file that cannot be read: ${file} (${errorCode(err)})`;
  }
  try {
    return createPrivateKey(pem);
  } catch (err) {
    return `names a file that holds no usable PEM private key (it must not be encrypted): ${file} (${(err as Error).message})`;
  }
}

const SECRETS_KEY_HINT = 'base64 of exactly 32 random bytes, e.g. from `openssl rand -base64 32`';

/**
 * SECRETS_KEY and SECRETS_KEY_PREVIOUS as ServiceKeys. Problems say what is wrong with a value
 * without ever repeating it: it is a secret.
 */
function secretsKeyFrom(
  current: string | undefined,
  previous: string | undefined,
  required: boolean,
  problems: string[],
): ServiceKeys | null {
  const decode = (name: string, text: string): Buffer | null => {
    const key = decodeBase64Key(text);
    if (typeof key === 'string') problems.push(`${name} must be ${SECRETS_KEY_HINT} (${key})`);
    return typeof key === 'string' ? null : key;
  };
  if (current === undefined) {
    if (required)
      problems.push(`SECRETS_KEY is required when EVENT_STORE=esdb, the same on every instance: ${SECRETS_KEY_HINT}`);
    if (previous !== undefined)
      problems.push('SECRETS_KEY_PREVIOUS is set without SECRETS_KEY: set SECRETS_KEY to the new key');
    return null;
  }
  const key = decode('SECRETS_KEY', current);
  const old = previous === undefined ? null : decode('SECRETS_KEY_PREVIOUS', previous);
  if (!key || (previous !== undefined && !old)) return null;
  return ServiceKeys.fromSecretsKey(key, old);
}

/** 32 bytes from standard or URL-safe base64, or why not (never the value). */
function decodeBase64Key(text: string): Buffer | string {
  const standard = /^[A-Za-z0-9+/]+={0,2}$/.test(text);
  if (!standard && !/^[A-Za-z0-9_-]+$/.test(text)) return 'it is not base64';
  const bytes = Buffer.from(text, standard ? 'base64' : 'base64url');
  // Node's decoder skips what it cannot use: only an exact round trip is the key that was meant.
  const again = bytes.toString(standard ? 'base64' : 'base64url').replace(/=+$/, '');
  if (again !== text.replace(/=+$/, '')) return 'it is not base64';
  return bytes.length === 32 ? bytes : `it decodes to ${bytes.length} bytes`;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** `10s,1m,5m` → [10000, 60000, 300000]. Every item needs a unit (ms, s, m, h, d). */
export function parseDurations(text: string): number[] {
  const items = text.split(',').map((s) => s.trim());
  if (items.length === 0 || items.some((s) => s === '')) {
    throw new Error('must be a comma-separated list of durations like 10s,1m,5m');
  }
  return items.map((item) => {
    const match = DURATION.exec(item);
    if (!match)
      throw new Error(`has ${JSON.stringify(item)}: each duration needs a whole number and a unit (ms, s, m, h, d)`);
    return Number(match[1]) * UNIT_MS[match[2]];
  });
}

/** One duration (`5d`, `2s`), from 1 ms to `maxMs`. */
export function parseDuration(text: string, maxMs: number): number {
  const match = DURATION.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : 0;
  if (!match || ms < 1 || ms > maxMs) {
    throw new Error(
      `must be one duration with a unit (ms, s, m, h, d) like 5d or 12h, from 1ms to ${maxMs / 86_400_000}d (got ${JSON.stringify(text)})`,
    );
  }
  return ms;
}

/** `100/1s` → at most 100 requests in any 1 s; `off` → null (no limit). */
export function parseRateLimit(text: string): { limit: number; windowMs: number } | null {
  if (text.toLowerCase() === 'off') return null;
  const match = /^(\d+)\s*\/\s*(\d+(?:ms|s|m|h))$/.exec(text);
  const limit = match ? Number(match[1]) : 0;
  const windowMs = match ? parseDurations(match[2])[0] : 0;
  if (!match || limit < 1 || limit > 1_000_000 || windowMs < 1 || windowMs > 3_600_000) {
    throw new Error(
      `must be requests per window like 100/1s or 6000/1m (1 to 1,000,000 requests, a window up to 1h), or off (got ${JSON.stringify(text)})`,
    );
  }
  return { limit, windowMs };
}

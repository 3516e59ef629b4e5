/** The value parsers behind the declared configuration (variables.ts): each throws a message without the variable's name. */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorCode } from './directory-check';

/** A whole number from `min` to `max`. */
export const integerIn =
  (min: number, max: number) =>
  (value: string | undefined): number => {
    if (!/^\d+$/.test(value ?? '') || Number(value) < min || Number(value) > max) {
      throw new Error(`must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
    }
    return Number(value);
  };

/** One of `choices`, or `message`. */
export const oneOf =
  <T extends string>(choices: readonly T[], message: string) =>
  (value: string | undefined): T => {
    if (!choices.includes(value as T)) throw new Error(message);
    return value as T;
  };

/** true/1/yes or false/0/no, any case. */
export function yesNo(value: string | undefined): boolean {
  const text = value?.toLowerCase();
  if (['true', '1', 'yes'].includes(text!)) return true;
  if (['false', '0', 'no'].includes(text!)) return false;
  throw new Error(`must be true or false (got ${JSON.stringify(text)})`);
}

/** An existing file's absolute path, or null when unset. */
export function fileValue(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!existsSync(value)) throw new Error(`names a file that does not exist: ${value}`);
  return resolve(value);
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
export function certificatesProblem(file: string): string | null {
  const certificates = readCertificates(file);
  return typeof certificates === 'string' ? certificates : null;
}

/** The HTTPS certificate (chain, leaf first) and its private key: each parses, and they match. */
export function tlsPairProblems(certFile: string, keyFile: string): string[] {
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

export const SECRETS_KEY_HINT = 'base64 of exactly 32 random bytes, e.g. from `openssl rand -base64 32`';

/** 32 bytes from standard or URL-safe base64, or why not (never the value). */
export function decodeBase64Key(text: string): Buffer | string {
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

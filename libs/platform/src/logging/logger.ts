import { extend } from '../domain/extend';
import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

const CENSOR = '[redacted]';
/** Nesting walked at most: deeper values are censored whole rather than written unchecked. */
const MAX_DEPTH = 16;

/**
 * Whether a key names a credential: `authorization`, `cookie`, and any key ending in `secret`,
 * `password`, `token` or `key` of a secret kind (`client_secret`, `access_token`, `newPassword`,
 * `secrets_key`…), `-`/`_` and case aside. `token_type` or `secret_fingerprint` are not.
 */
export function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_]/g, '');
  return (
    name === 'authorization' ||
    name === 'proxyauthorization' ||
    name === 'cookie' ||
    name === 'setcookie' ||
    /(secret|password|passphrase|token|secretskey|apikey|privatekey)$/.test(name)
  );
}

/**
 * A copy of a log object with every credential-named key censored, at any depth (pino's own
 * `redact` takes fixed paths only: `a.*.b`, never "anywhere"). Errors are serialized first, so
 * their own properties are walked too. Credentials must never reach a log line (CONTRACT.md §1).
 */
export function redactSecrets(value: unknown, depth = 0, ancestors = new Set<object>()): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_DEPTH) return CENSOR;
  if (ancestors.has(value)) return '[circular]';
  const source = value instanceof Error ? (pino.stdSerializers.err(value) as object) : value;
  if (!Array.isArray(source) && !isPlainRecord(source)) return source;
  ancestors.add(value);
  let copy: unknown;
  if (Array.isArray(source)) copy = source.map((item) => redactSecrets(item, depth + 1, ancestors));
  else {
    const record: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(source)) {
      record[key] = isSecretKey(key) ? CENSOR : redactSecrets(item, depth + 1, ancestors);
    }
    copy = record;
  }
  ancestors.delete(value);
  return copy;
}

/** Walked as their own keys: what JSON.stringify writes as such (not Buffers, Dates, anything with a toJSON). */
function isPlainRecord(value: object): value is Record<string, unknown> {
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { log: (object) => redactSecrets(object) as Record<string, unknown> },
      // The formatter has serialized (and censored) errors already: pino's own would serialize them again.
      serializers: { err: (err: unknown) => err },
    },
    destination,
  );
}

/** Nest's logger interface on top of pino, so framework and application logs share one stream. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  // Nest passes (message, ...optionalParams, context); an Error or a stack string may come first.
  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    if (message instanceof Error) {
      this.logger[level](extend(fields, { err: message }), message.message);
      return;
    }
    const stack = rest.find((r) => typeof r === 'string');
    if (stack) fields.stack = stack;
    if (typeof message === 'object' && message !== null) this.logger[level](extend(fields, message));
    else this.logger[level](fields, String(message));
  }
}

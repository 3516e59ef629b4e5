import { extend } from '../domain/extend';
import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/**
 * Paths pino censors wherever they appear in a log object: credentials must never reach a log
 * line, at any level (CONTRACT.md §1).
 */
export const REDACTED_PATHS = [
  'authorization',
  'password',
  'client_secret',
  'access_token',
  'token',
  'secret',
  '*.authorization',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.token',
  '*.secret',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
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

import type { INestApplicationContext } from '@nestjs/common';

/** One operator command: `npm run cli -- <name> [args]`. */
export interface CliCommand {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  /** Writes its output to `out`; throws `UsageError` for bad arguments. */
  run(app: INestApplicationContext, args: string[], out: NodeJS.WritableStream): Promise<void>;
}

/** Bad arguments: the CLI prints the message and the command's usage, and exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command ran and found a problem (e.g. an audit difference): exit non-zero after its report. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

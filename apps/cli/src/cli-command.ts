import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { type Command, CommandBus } from '@nestjs/cqrs';
import { type CommandContext, DomainError, ValidationError } from '@filing/platform';

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

/** The context of a command an operator runs from the CLI: no account, actor `operator:cli`. */
export function operatorContext(): CommandContext {
  return { account_id: null, actor: 'operator:cli', correlation_id: randomUUID(), causation_id: null };
}

/** Sends a command; a domain error (bad input, not found, conflict) becomes a CommandFailedError, printed without a stack. */
export async function executeCommand<R>(app: INestApplicationContext, command: Command<R>): Promise<R> {
  try {
    return await app.get(CommandBus).execute(command);
  } catch (err) {
    if (err instanceof ValidationError) {
      throw new CommandFailedError(err.errors.map((e) => `${e.field}: ${e.message}`).join('\n'));
    }
    if (err instanceof DomainError) throw new CommandFailedError(err.message);
    throw err;
  }
}

/** A command's output: one JSON object on one line of stdout. */
export function printJson(out: NodeJS.WritableStream, value: object): void {
  out.write(JSON.stringify(value) + '\n');
}

import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { CONFIG_VARIABLES, ConfigError, createLogger, loadConfig, PinoNestLogger } from '@filing/platform';
import { type CliCommand, CommandFailedError, UsageError } from './cli-command';
import { CliModule } from './cli.module';
import { auditCommand } from './commands/audit.command';
import { authCommands } from './commands/auth.commands';
import { accountsEraseCommand, documentsEncryptCommand, secretsResealCommand } from './commands/erasure.commands';
import { eventsExportCommand } from './commands/events-export.command';
import { ordersCompleteCommand } from './commands/orders-complete.command';
import { processorsCommands } from './commands/processors.commands';
import { replayCommand } from './commands/replay.command';

const COMMANDS: readonly CliCommand[] = [
  ...authCommands,
  ordersCompleteCommand,
  replayCommand,
  auditCommand,
  eventsExportCommand,
  ...processorsCommands,
  secretsResealCommand,
  documentsEncryptCommand,
  accountsEraseCommand,
];

/** A variable as the help lists it: a pair read together under its README title. */
function helpName(name: string, variable: { title?: string }): string {
  return variable.title ? variable.title.replaceAll('`', '') : name;
}

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.usage.length));
  return [
    'Usage: npx filing <command> [options]   (or: npm run cli -- <command> [options])',
    '',
    ...COMMANDS.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
    '',
    'Environment (the same as the service reads; README.md, "Configuration"):',
    ...Object.entries(CONFIG_VARIABLES).map(([name, v]) => `  ${helpName(name, v)}${v.default ? `=${v.default}` : ''}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`Unknown command: ${name}\n\n${usage()}\n`);
    return 2;
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      return 1;
    }
    throw err;
  }
  // stdout carries the command's output (JSON, NDJSON); logs go to stderr.
  const logger = new PinoNestLogger(
    createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2)),
  );
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger });
  try {
    await command.run(app, args, process.stdout);
    return 0;
  } catch (err) {
    if (err instanceof CommandFailedError) {
      process.stderr.write(`${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\nUsage: npx filing ${command.usage}\n`);
      return 2;
    }
    throw err;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

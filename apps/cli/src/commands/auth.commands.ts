import { parseArgs } from 'node:util';
import {
  CreateAccountCommand,
  CreateClientCommand,
  createdAccountView,
  createdClientView,
  createdUserView,
  CreateUserCommand,
  ExpirePreviousSecretCommand,
  MAX_PREVIOUS_SECRET_SECONDS,
  RevokeClientCommand,
  RotateClientSecretCommand,
} from '@filing/auth';
import {
  type CliCommand,
  executeCommand as execute,
  operatorContext,
  printJson as print,
  UsageError,
} from '../cli-command';
import { readPassword } from '../read-password';
import { extend, parseDuration } from '@filing/platform';

/**
 * The operator's auth commands (CONTRACT.md §6): how the first operator client is made. They
 * append events only; the running service's projections pick them up (within a second).
 * Each prints one JSON object on stdout; a create prints what the operator API answers for the
 * same resource (plus the secret, printed once and never stored).
 */
function oneId(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected one client id (${usage})`);
  return positionals[0];
}

export const accountsCreateCommand: CliCommand = {
  name: 'accounts:create',
  usage: 'accounts:create --name NAME',
  summary: 'Create an account; prints {"id",...}',
  async run(app, args, out) {
    const { values } = parseArgs({ args, options: { name: { type: 'string' } }, strict: true });
    if (!values.name) throw new UsageError('--name is required');
    const result = await execute(app, new CreateAccountCommand(values.name, operatorContext()));
    print(out, createdAccountView(result));
  },
};

export const clientsCreateCommand: CliCommand = {
  name: 'clients:create',
  usage: 'clients:create (--account ID [--scope "read write"] | --operator)',
  summary: 'Create an API client; prints {"client_id","client_secret",...} (the secret only this once)',
  async run(app, args, out) {
    const { values } = parseArgs({
      args,
      options: { account: { type: 'string' }, scope: { type: 'string' }, operator: { type: 'boolean' } },
      strict: true,
    });
    if (values.operator && values.account)
      throw new UsageError('--operator clients belong to no account: drop --account');
    if (!values.operator && !values.account) throw new UsageError('--account ID or --operator is required');
    const result = await execute(
      app,
      new CreateClientCommand(
        { accountId: values.account ?? null, kind: values.operator ? 'operator' : 'customer', scope: values.scope },
        operatorContext(),
      ),
    );
    print(out, extend(createdClientView(result), { client_secret: result.clientSecret }));
  },
};

/** `--keep-previous 24h` → seconds (0, or a whole number of seconds up to 7 days). */
function keepPreviousSeconds(text: string | undefined): number {
  if (text === undefined || text === '0') return 0;
  let ms: number;
  try {
    ms = parseDuration(text, MAX_PREVIOUS_SECRET_SECONDS * 1000);
  } catch (err) {
    throw new UsageError(`--keep-previous ${(err as Error).message}`);
  }
  if (ms % 1000 !== 0) throw new UsageError('--keep-previous must be a whole number of seconds (like 90s, 24h or 7d)');
  return ms / 1000;
}

export const clientsRotateSecretCommand: CliCommand = {
  name: 'clients:rotate-secret',
  usage: 'clients:rotate-secret CLIENT_ID [--keep-previous 24h]',
  summary:
    'Give a client a new secret (printed once); the old one and its tokens stop working at once, or after --keep-previous (up to 7d)',
  async run(app, args, out) {
    const { positionals, values } = parseArgs({
      args,
      options: { 'keep-previous': { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    const id = oneId(positionals, this.usage);
    const previousSecretExpiresIn = keepPreviousSeconds(values['keep-previous']);
    const result = await execute(
      app,
      new RotateClientSecretCommand(id, operatorContext(), { previousSecretExpiresIn }),
    );
    print(out, {
      client_id: result.clientId,
      client_secret: result.clientSecret,
      secret_generation: result.secretGeneration,
      previous_secret_expires_at: result.previousSecretExpiresAt,
    });
  },
};

export const clientsExpirePreviousSecretCommand: CliCommand = {
  name: 'clients:expire-previous-secret',
  usage: 'clients:expire-previous-secret CLIENT_ID',
  summary: "End a rotation's overlap now: the previous secret and its tokens stop working",
  async run(app, args, out) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
    const id = oneId(positionals, this.usage);
    const result = await execute(app, new ExpirePreviousSecretCommand(id, operatorContext()));
    print(out, { client_id: result.clientId, previous_secret_expires_at: null });
  },
};

export const clientsRevokeCommand: CliCommand = {
  name: 'clients:revoke',
  usage: 'clients:revoke CLIENT_ID',
  summary: 'Revoke a client; it and its tokens stop working',
  async run(app, args, out) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
    const id = oneId(positionals, this.usage);
    const result = await execute(app, new RevokeClientCommand(id, operatorContext()));
    print(out, { client_id: result.clientId, status: 'revoked' });
  },
};

export const usersCreateCommand: CliCommand = {
  name: 'users:create',
  usage: 'users:create --account ID --email EMAIL (--password-stdin | --password PASSWORD)',
  summary: 'Create a settings-screen user of an account; prints {"id",...} (--password-stdin: asked for, or piped)',
  async run(app, args, out) {
    const { values } = parseArgs({
      args,
      options: {
        account: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
      },
      strict: true,
    });
    if (values.password !== undefined && values['password-stdin'])
      throw new UsageError('Give --password-stdin or --password, not both');
    const missing = [
      values.account ? '' : '--account',
      values.email ? '' : '--email',
      values.password !== undefined || values['password-stdin'] ? '' : '--password-stdin (or --password)',
    ].filter(Boolean);
    if (missing.length > 0) throw new UsageError(`Missing ${missing.join(', ')}`);
    const password = values['password-stdin'] ? await readPassword() : values.password!;
    const result = await execute(
      app,
      new CreateUserCommand({ accountId: values.account!, email: values.email!, password }, operatorContext()),
    );
    print(out, createdUserView(result));
  },
};

export const authCommands: readonly CliCommand[] = [
  accountsCreateCommand,
  clientsCreateCommand,
  clientsRotateSecretCommand,
  clientsExpirePreviousSecretCommand,
  clientsRevokeCommand,
  usersCreateCommand,
];

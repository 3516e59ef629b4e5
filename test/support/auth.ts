/**
 * Provisioning for end-to-end tests: an account with an API client and a live token, made
 * in-process through the app's CommandBus (as the CLI does), the token fetched over real HTTP.
 */
import { CreateAccountCommand, CreateClientCommand } from '@filing/auth';
import { type CommandContext, ReadYourWrites } from '@filing/platform';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { TestService } from './service';

export interface ProvisionedClient {
  /** null for an operator client. */
  readonly accountId: string | null;
  readonly clientId: string;
  readonly clientSecret: string;
  /** A live bearer token with every scope the client may have (or `scope` when given). */
  readonly token: string;
}

export interface ProvisionOptions {
  /** Scopes of the client and its token, space-separated; default `read write`. */
  readonly scope?: string;
  readonly name?: string;
}

const operatorContext = (): CommandContext => ({
  account_id: null,
  actor: 'operator:test',
  correlation_id: randomUUID(),
  causation_id: null,
});

/** A new account, a customer client of it, and a token: `{ accountId, clientId, clientSecret, token }`. */
export async function provisionAccount(
  service: TestService,
  opts: ProvisionOptions = {},
): Promise<ProvisionedClient & { accountId: string }> {
  const bus = service.app.get(CommandBus);
  const account = await bus.execute(
    new CreateAccountCommand(opts.name ?? `Test account ${randomUUID().slice(0, 8)}`, operatorContext()),
  );
  const client = await createClient(service, account.accountId, opts.scope);
  return { ...client, accountId: account.accountId };
}

/** Another client of an existing account, with its token. */
export async function provisionClient(
  service: TestService,
  accountId: string,
  scope?: string,
): Promise<ProvisionedClient> {
  return createClient(service, accountId, scope);
}

/** An operator client (scope `operator`, no account) and a token. */
export async function provisionOperator(service: TestService): Promise<ProvisionedClient> {
  const bus = service.app.get(CommandBus);
  const client = await bus.execute(new CreateClientCommand({ accountId: null, kind: 'operator' }, operatorContext()));
  await service.app.get(ReadYourWrites).await(client.position);
  const token = await requestToken(service.url, client.clientId, client.clientSecret);
  return { accountId: null, clientId: client.clientId, clientSecret: client.clientSecret, token };
}

async function createClient(service: TestService, accountId: string, scope?: string): Promise<ProvisionedClient> {
  const bus = service.app.get(CommandBus);
  const client = await bus.execute(new CreateClientCommand({ accountId, kind: 'customer', scope }, operatorContext()));
  // The token endpoint reads clients from the read model: wait until it has this one.
  await service.app.get(ReadYourWrites).await(client.position);
  const token = await requestToken(service.url, client.clientId, client.clientSecret, scope);
  return { accountId, clientId: client.clientId, clientSecret: client.clientSecret, token };
}

/** POST /o/token/ with the secret in the form; throws unless 200. */
export async function requestToken(
  baseUrl: string,
  clientId: string,
  clientSecret: string,
  scope?: string,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  if (scope) form.set('scope', scope);
  const res = await fetch(`${baseUrl}/o/token/`, { method: 'POST', body: form });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`Token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** `{ authorization: 'Bearer <token>' }`, to spread into fetch headers. */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

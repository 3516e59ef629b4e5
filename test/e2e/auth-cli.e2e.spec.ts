/**
 * The operator CLI's auth commands (CONTRACT.md §6) against a running service on the same
 * DATA_DIR: what the CLI creates works over HTTP at once (the service catches up with the
 * store when it does not know a client yet), rotation and revocation take effect.
 */
import { randomUUID } from 'node:crypto';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ReadYourWrites } from '@filing/platform';
import { bearer, provisionOperator, requestToken } from '../support/auth';
import { runCli, runCliOnTerminal } from '../support/cli';
import { ProbeModule } from '../support/probe.module';
import { startService, type TestService } from '../support/service';
import { HttpSession } from '../support/settings-screen';

describe('auth CLI commands', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ imports: [ProbeModule] });
  }, 60_000);
  afterAll(async () => service?.destroy());

  async function cli(...args: string[]): Promise<{ code: number; json: Record<string, string>; stderr: string }> {
    return parsed(await runCli(service.dataDir, args, 30_000));
  }
  function parsed({ code, stdout, stderr }: { code: number; stdout: string; stderr: string }) {
    if (code !== 0) return { code, json: {}, stderr };
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return { code, json: JSON.parse(lines[0]) as Record<string, string>, stderr };
  }
  /** Waits until the service has read what the CLI (another process) appended. */
  async function caughtUp(): Promise<void> {
    await service.app.get(ReadYourWrites).await(await service.app.get<EventStore>(EVENT_STORE).headPosition());
  }

  it('makes the first operator client, whose token works on the internal API', async () => {
    const op = await cli('clients:create', '--operator');
    expect(op.code).toBe(0);
    expect(op.json).toMatchObject({ kind: 'operator', account_id: null, scope: 'operator' });
    const token = await requestToken(service.url, op.json.client_id, op.json.client_secret);
    const res = await fetch(`${service.url}/internal-api/v1/accounts`, { headers: bearer(token) });
    expect(res.status).toBe(200);
  }, 30_000);

  it('creates an account, a narrowed client and a user; rotates and revokes the client', async () => {
    const account = await cli('accounts:create', '--name', 'Gamma Co');
    expect(account.code).toBe(0);
    expect(account.json).toMatchObject({ id: expect.any(String), name: 'Gamma Co', version: 0 });

    const [client, user] = await Promise.all([
      cli('clients:create', '--account', account.json.id, '--scope', 'read'),
      cli('users:create', '--account', account.json.id, '--email', 'Ops@Gamma.example', '--password', 'correct horse'),
    ]);
    expect(client.json).toMatchObject({ account_id: account.json.id, kind: 'customer', scope: 'read' });
    expect(client.json.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(user.json).toMatchObject({ account_id: account.json.id, email: 'ops@gamma.example' });
    // What a create prints is what the operator API answers for the same resource (the secret aside).
    await caughtUp();
    const opToken = (await provisionOperator(service)).token;
    const viaApi = async (path: string) =>
      (await fetch(`${service.url}/internal-api/v1/${path}`, { headers: bearer(opToken) })).json();
    const { client_secret: _, ...clientShown } = client.json;
    expect([account.json, clientShown, user.json]).toEqual([
      await viaApi(`accounts/${account.json.id}`),
      await viaApi(`clients/${client.json.client_id}`),
      await viaApi(`users/${user.json.id}`),
    ]);
    const token = await requestToken(service.url, client.json.client_id, client.json.client_secret);
    const probe = await fetch(`${service.url}/external-api/v1/_probe`, { headers: bearer(token) });
    expect(((await probe.json()) as { principal: { accountId: string } }).principal.accountId).toBe(account.json.id);

    const rotated = await cli('clients:rotate-secret', client.json.client_id);
    expect(rotated.json).toMatchObject({ client_id: client.json.client_id, secret_generation: 2 });
    expect(rotated.json.client_secret).not.toBe(client.json.client_secret);
    // The new secret works at once: the service catches up with the store on an unknown secret.
    const fresh = await requestToken(service.url, client.json.client_id, rotated.json.client_secret);
    expect((await fetch(`${service.url}/external-api/v1/_probe`, { headers: bearer(fresh) })).status).toBe(200);

    const revoked = await cli('clients:revoke', client.json.client_id);
    expect(revoked.json).toEqual({ client_id: client.json.client_id, status: 'revoked' });
    // Another process's append reaches the service's read models within its poll interval.
    await caughtUp();
    await expect(requestToken(service.url, client.json.client_id, rotated.json.client_secret)).rejects.toThrow(/401/);
    expect((await fetch(`${service.url}/external-api/v1/_probe`, { headers: bearer(fresh) })).status).toBe(401);
  }, 60_000);

  it('rotates with --keep-previous (both secrets work) and ends the overlap with expire-previous-secret', async () => {
    const account = await cli('accounts:create', '--name', 'Overlap Co');
    const client = await cli('clients:create', '--account', account.json.id);
    const rotated = await cli('clients:rotate-secret', client.json.client_id, '--keep-previous', '24h');
    expect(rotated.code).toBe(0);
    expect(rotated.json).toMatchObject({ client_id: client.json.client_id, secret_generation: 2 });
    const keptFor = Date.parse(rotated.json.previous_secret_expires_at) - Date.now();
    expect(keptFor).toBeGreaterThan(23 * 3_600_000);
    expect(keptFor).toBeLessThanOrEqual(24 * 3_600_000);
    const probe = async (token: string) =>
      (await fetch(`${service.url}/external-api/v1/_probe`, { headers: bearer(token) })).status;
    const oldToken = await requestToken(service.url, client.json.client_id, client.json.client_secret);
    const newToken = await requestToken(service.url, client.json.client_id, rotated.json.client_secret);
    expect([await probe(oldToken), await probe(newToken)]).toEqual([200, 200]);

    const expired = await cli('clients:expire-previous-secret', client.json.client_id);
    expect(expired.json).toEqual({ client_id: client.json.client_id, previous_secret_expires_at: null });
    await caughtUp();
    expect([await probe(oldToken), await probe(newToken)]).toEqual([401, 200]);
    await expect(requestToken(service.url, client.json.client_id, client.json.client_secret)).rejects.toThrow(/401/);

    const tooLong = await runCli(service.dataDir, [
      'clients:rotate-secret',
      client.json.client_id,
      '--keep-previous',
      '8d',
    ]);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('--keep-previous');
  }, 90_000);

  it('audit finds the auth read models equal to a rebuild from the stream', async () => {
    const audit = await runCli(service.dataDir, ['audit'], 30_000);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/audited \d+ tables/);
  }, 30_000);

  describe('users:create --password-stdin', () => {
    const signsIn = async (email: string, password: string) => {
      await caughtUp();
      return (await new HttpSession(service.url).signIn(email, password)).status;
    };

    it('reads a piped password (without its trailing newline); the user signs in with it', async () => {
      const account = await cli('accounts:create', '--name', 'Piped Co');
      const password = `piped ${randomUUID()}`;
      const args = ['users:create', '--account', account.json.id, '--email', 'piped@example.com', '--password-stdin'];
      const user = parsed(await runCli(service.dataDir, args, 30_000, `${password}\n`));
      expect(user.json).toMatchObject({ account_id: account.json.id, email: 'piped@example.com' });
      expect(await signsIn('piped@example.com', password)).toBe(303);
      expect(await signsIn('piped@example.com', `${password}\n`)).toBe(401);
    }, 30_000);

    it('asks twice on a terminal, showing nothing of what is typed; the user signs in with it', async () => {
      const account = await cli('accounts:create', '--name', 'Terminal Co');
      const password = `typed-${randomUUID()}`;
      const args = ['users:create', '--account', account.json.id, '--email', 'typed@example.com', '--password-stdin'];
      const { code, output } = await runCliOnTerminal(service.dataDir, args, [
        { prompt: 'Password: ', type: password },
        { prompt: 'Password again: ', type: password },
      ]);
      expect(code).toBe(0);
      expect(output).not.toContain(password);
      expect(JSON.parse(output.slice(output.indexOf('{')))).toMatchObject({ email: 'typed@example.com' });
      expect(await signsIn('typed@example.com', password)).toBe(303);
    }, 30_000);

    it('refuses two different passwords typed on a terminal, a second line on stdin, and --password beside it', async () => {
      const account = await cli('accounts:create', '--name', 'Refused Co');
      const base = ['users:create', '--account', account.json.id, '--email', 'refused@example.com'];
      const typo = await runCliOnTerminal(
        service.dataDir,
        [...base, '--password-stdin'],
        [
          { prompt: 'Password: ', type: 'correct horse battery' },
          { prompt: 'Password again: ', type: 'correct horse batery' },
        ],
      );
      expect(typo.code).toBe(2);
      expect(typo.output).toContain('The two passwords differ');
      const twoLines = await runCli(
        service.dataDir,
        [...base, '--password-stdin'],
        30_000,
        'first line\nsecond line\n',
      );
      expect([twoLines.code, twoLines.stderr]).toEqual([2, expect.stringContaining('--password-stdin takes one line')]);
      const both = await runCli(service.dataDir, [...base, '--password-stdin', '--password', 'x'], 30_000);
      expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('not both')]);
      expect(await signsIn('refused@example.com', 'correct horse battery')).toBe(401);
    }, 30_000);
  });

  it('reports bad input without a stack trace and exits non-zero', async () => {
    const [noAccount, dupUser, usage] = await Promise.all([
      cli('clients:create', '--account', '01900000-0000-7000-8000-000000000000'),
      cli('users:create', '--account', 'x', '--email', 'a@b.co'),
      cli('clients:revoke'),
    ]);
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('account_id: No account with id');
    expect(dupUser.code).toBe(2);
    expect(dupUser.stderr).toContain('--password');
    expect(usage.code).toBe(2);
  }, 30_000);
});

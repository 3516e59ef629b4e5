/**
 * `audit` over a wide workload (issue 7: "audit passes after the full e2e suite's data"): every
 * resource family, auth (operator API, tokens, a revocation, a rotation) and webhooks (endpoints,
 * the switch, delivered, retried, failed, redelivered and cancelled deliveries over HTTPS) go
 * through the real API; audit then passes with every read-model table holding rows, and one
 * tampered row in each table, plus a deleted one, makes it fail naming each of them.
 */
import { rmSync } from 'node:fs';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ProjectionRunner } from '@filing/platform';
import { provisionAccount, provisionOperator, requestToken } from '../support/auth';
import { runCli } from '../support/cli';
import { HttpSession } from '../support/settings-screen';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, fanOutCheckpoint, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';
const OPS = '/internal-api/v1';

describe('audit after a workload across every read model', () => {
  let service: TestService;
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let tables: string[];

  beforeAll(async () => {
    pki = makeTestPki('Audit');
    receiver = await startReceiver(pki);
    service = await startService({
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS: '100ms,200ms',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    tables = service.app.get(ProjectionRunner).registered.flatMap((p) => p.tables);
    await workload();
    await quiescent();
  }, 60_000);
  afterAll(async () => {
    // The last test tampers with the read models on purpose.
    await service?.destroy({ audit: false });
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  async function workload(): Promise<void> {
    // Auth through the operator API: an account, a client (a token, then a rotation), a revoked client, a user.
    const operator = await provisionOperator(service);
    const ops = apiClient(service.url, operator.token);
    const account = await ops('POST', `${OPS}/accounts`, { name: 'Audited LLC' });
    expect(account.status).toBe(201);
    const client = await ops('POST', `${OPS}/clients`, { account_id: account.body.id });
    expect(client.status).toBe(201);
    const token = await requestToken(service.url, client.body.client_id, client.body.client_secret);
    const revoked = await fetch(`${service.url}/o/revoke_token/`, {
      method: 'POST',
      body: new URLSearchParams({ token, client_id: client.body.client_id, client_secret: client.body.client_secret }),
    });
    expect(revoked.status).toBe(200);
    expect((await ops('POST', `${OPS}/clients/${client.body.client_id}/rotate-secret`)).status).toBe(200);
    const spare = await ops('POST', `${OPS}/clients`, { account_id: account.body.id, scope: 'read' });
    expect((await ops('POST', `${OPS}/clients/${spare.body.client_id}/revoke`)).status).toBe(200);
    expect(
      (
        await ops('POST', `${OPS}/users`, {
          account_id: account.body.id,
          email: 'audit@example.com',
          password: 'correct horse battery',
        })
      ).status,
    ).toBe(201);
    // A settings-screen session (its own read model since sessions are events).
    expect((await new HttpSession(service.url).signIn('audit@example.com', 'correct horse battery')).status).toBe(303);

    // Webhooks first, so every family's events are notified: one endpoint that answers (after a
    // 503 once and a 400 once), one that asks for an hour's wait and is then disabled, then deleted.
    const customer = await provisionAccount(service);
    const api = apiClient(service.url, customer.token);
    const good = await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url });
    const slow = await startReceiver(pki, '/slow');
    try {
      slow.fallback = { status: 503, headers: { 'retry-after': '3600' } };
      const later = await api('POST', `${V1}/webhook-endpoints`, { url: slow.url, event_types: ['entity.created'] });
      for (const ep of [good, later])
        expect((await api('POST', `${V1}/webhook-endpoints/${ep.body.id}/enable`)).status).toBe(200);
      expect((await api('POST', `${V1}/webhook-endpoints/${good.body.id}/rotate-secret`)).status).toBe(200);
      receiver.script({ status: 503 }, { status: 400 });
      expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);

      // Every family, each created and changed; an order cancelled, another completed; a document deleted.
      const entity = await created(api, '/entities', { name: 'Audit Holdings', entity_type: 'llc' });
      expect((await api('PATCH', `${V1}/entities/${entity}`, { status: 'inactive' })).status).toBe(200);
      await created(api, '/entities', { name: 'Audit Subsidiary', entity_type: 'corporation' });
      const jurisdiction = await created(api, '/jurisdictions', {
        entity_id: entity,
        code: 'US-DE',
        registration_type: 'domestic',
      });
      expect((await api('PATCH', `${V1}/jurisdictions/${jurisdiction}`, { status: 'active' })).status).toBe(200);
      const task = await created(api, '/tasks', { entity_id: entity, title: 'File the annual report' });
      expect((await api('PATCH', `${V1}/tasks/${task}`, { status: 'completed' })).status).toBe(200);
      const cancelled = await created(api, '/orders', { entity_id: entity, order_type: 'annual_report' });
      expect((await api('POST', `${V1}/orders/${cancelled}/cancel`, { reason: 'filed elsewhere' })).status).toBe(200);
      const completed = await created(api, '/orders', { entity_id: entity, order_type: 'annual_report' });
      expect((await ops('POST', `${OPS}/orders/${completed}/complete`)).status).toBe(200);
      const document = (title: string) => ({
        entity_id: entity,
        order_id: completed,
        title,
        document_type: 'certificate',
        content_type: 'text/plain',
        content_base64: Buffer.from(title).toString('base64'),
      });
      const kept = await created(api, '/documents', document('Certificate'));
      expect((await api('PATCH', `${V1}/documents/${kept}`, { title: 'Certificate (signed)' })).status).toBe(200);
      const gone = await created(api, '/documents', document('Draft'));
      expect((await api('DELETE', `${V1}/documents/${gone}`)).status).toBe(204);

      // The slow endpoint's delivery waits for its retry; disabling cancels it, then it is deleted.
      await eventually(async () =>
        (await deliveries(api, later.body.id)).some((d) => d.attempt_count === 1) ? true : undefined,
      );
      expect((await api('POST', `${V1}/webhook-endpoints/${later.body.id}/disable`)).status).toBe(200);
      await eventually(async () =>
        (await deliveries(api, later.body.id)).every((d) => d.status === 'cancelled') ? true : undefined,
      );
      expect((await api('DELETE', `${V1}/webhook-endpoints/${later.body.id}`)).status).toBe(204);

      // The 400 failed one delivery at once: redeliver it by hand.
      const failed = await eventually(async () => (await deliveries(api, good.body.id, 'failed'))[0]);
      expect((await api('POST', `${V1}/webhook-deliveries/${failed.id}/redeliver`)).status).toBe(202);
    } finally {
      await slow.close();
    }
  }

  async function created(api: Api, path: string, body: Record<string, unknown>): Promise<string> {
    const res = await api('POST', `${V1}${path}`, body);
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function deliveries(
    api: Api,
    endpointId: string,
    status?: string,
  ): Promise<Array<{ id: string; status: string; attempt_count: number }>> {
    const res = await api(
      'GET',
      `${V1}/webhook-endpoints/${endpointId}/deliveries?limit=100${status ? `&status=${status}` : ''}`,
    );
    return res.body.data;
  }

  /**
   * Nothing more will be written: the fan-out and the read models have reached the head of the
   * log, no delivery is pending, and the head has not moved meanwhile.
   */
  async function quiescent(): Promise<void> {
    const store = service.app.get<EventStore>(EVENT_STORE);
    const runner = service.app.get(ProjectionRunner);
    const fanOut = fanOutCheckpoint(service.dataDir);
    try {
      await eventually(async () => {
        const head = await store.headPosition();
        const fanOutAt = fanOut.commit();
        const readAt = runner.position();
        const pending = runner.db
          .prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'")
          .get() as { n: number };
        const settled =
          head !== null &&
          fanOutAt !== null &&
          fanOutAt >= head.commit &&
          readAt !== null &&
          readAt.commit >= head.commit &&
          pending.n === 0;
        return settled && (await store.headPosition())?.commit === head.commit ? true : undefined;
      }, 50);
    } finally {
      fanOut.close();
    }
  }

  it('passes, with every read-model table holding rows', async () => {
    const db = service.app.get(ProjectionRunner).db;
    const empty = tables.filter((t) => (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n === 0);
    expect(empty).toEqual([]);
    const statuses = db
      .prepare('SELECT DISTINCT status FROM webhook_deliveries ORDER BY status')
      .all()
      .map((r: any) => r.status);
    expect(statuses).toEqual(['cancelled', 'delivered']);
    expect(receiver.requests.map((r) => r.answered)).toEqual(expect.arrayContaining([503, 400, 200]));

    const audit = await runCli(service.dataDir, ['audit']);
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(0);
    expect(audit.stdout).toContain(`audited ${tables.length} tables`);
    expect(audit.stdout).toMatch(/read-model digest sha256:[0-9a-f]{64}/);
    expect(audit.stdout).toContain('audit passed');
  });

  it('fails on a tampered row in any table, or a missing one, naming each by table and key', async () => {
    const db = service.app.get(ProjectionRunner).db;
    const named: string[] = [];
    // Credential hashes (clients' secret_hash, tokens' token_hash) are shown only by their prefix.
    const hashColumns = ['secret_hash', 'token_hash'];
    const hashes: string[] = [];
    for (const table of tables) {
      const columns = db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string; pk: number }>;
      const keys = columns
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const column = columns.find((c) => c.pk === 0)!.name;
      // The first row written, or in a WITHOUT ROWID table (no rowid) the first by primary key.
      const { wr } = db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').get(table) as { wr: number };
      const at = wr ? keys.map((k) => `"${k}"`) : ['rowid'];
      const row = db
        .prepare(`SELECT ${at.join(', ')}, * FROM "${table}" ORDER BY ${at.join(', ')} LIMIT 1`)
        .raw()
        .get() as unknown[];
      const where = row.slice(0, at.length);
      const values = db
        .prepare(`SELECT * FROM "${table}" WHERE ${at.map((c) => `${c} = ?`).join(' AND ')}`)
        .get(...where) as Record<string, unknown>;
      db.prepare(`UPDATE "${table}" SET "${column}" = ? WHERE ${at.map((c) => `${c} = ?`).join(' AND ')}`).run(
        `tampered ${table}`,
        ...where,
      );
      const shown = { ...values, [column]: `tampered ${table}` };
      for (const c of hashColumns) if (typeof shown[c] === 'string') shown[c] = `${shown[c].slice(0, 8)}…`;
      const key = keys.map((k) => (hashColumns.includes(k) ? shown[k] : values[k]));
      named.push(`DIFF ${table} ${JSON.stringify(key)}\n  columns: ${column}\n  live:    ${JSON.stringify(shown)}`);
      for (const c of hashColumns) if (typeof values[c] === 'string') hashes.push(values[c]);
    }
    const lost = db.prepare('SELECT id FROM entities ORDER BY rowid DESC LIMIT 1').get() as { id: string };
    db.prepare('DELETE FROM entities WHERE id = ?').run(lost.id);

    const audit = await runCli(service.dataDir, ['audit']);
    expect(audit.code).toBe(1);
    expect(audit.stderr).toContain(`audit failed: ${tables.length + 1} rows differ from a rebuild`);
    for (const line of named) expect(audit.stdout).toContain(line);
    expect(audit.stdout).toContain(`DIFF entities ${JSON.stringify([lost.id])}\n  live:    null`);
    expect(hashes.length).toBeGreaterThanOrEqual(2);
    for (const hash of hashes) expect(audit.stdout).not.toContain(hash);
  });
});

/**
 * Audit by replay (CONTRACT.md §6, issue 7): `replay` rebuilds every read model from 100k events
 * while the service keeps answering, and the API answers the same afterwards (every family's
 * lists, items and histories, a document's content, webhook endpoints and settings); `audit` passes on
 * honest read models and fails, naming the row, on a corrupted one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectionRunner } from '@filing/platform';
import { bearer, provisionAccount, type ProvisionedClient } from '../support/auth';
import { resourceApi } from '../support/api';
import { runCli } from '../support/cli';
import { generateEntityEvents } from '../support/generate-events';
import { startService, type TestService } from '../support/service';

const VOLUME = 100_000;

describe('replay and audit on a running service', () => {
  let service: TestService;
  let client: ProvisionedClient;
  const api = resourceApi(() => service);
  /** Every resource the snapshot reads back, by its collection path. */
  const made: Array<{ path: string; id: string }> = [];
  const entityIds = () => made.filter((m) => m.path === '/entities').map((m) => m.id);

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'replay-audit-'));
    await generateEntityEvents(dataDir, VOLUME);
    service = await startService({ reuse: { dataDir }, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await waitUntil(async () => (await fetch(`${service.url}/readyz`)).status === 200, 120_000);
    client = await provisionAccount(service);
    const create = async (path: string, body: Record<string, unknown>) => {
      const { id } = await api.create(client, path, body);
      made.push({ path, id });
      return id;
    };
    for (const name of ['Acme LLC', 'Beta Corp', 'Gamma Partners'])
      await create('/entities', { name, entity_type: 'llc' });
    const [acme, beta] = entityIds();
    expect((await api.call(client, 'PATCH', `/entities/${beta}`, { status: 'dissolved' })).status).toBe(200);
    // One of each family too, with a write each, so every read model is compared.
    const jurisdiction = await create('/jurisdictions', {
      entity_id: acme,
      code: 'US-DE',
      registration_type: 'domestic',
    });
    expect((await api.call(client, 'PATCH', `/jurisdictions/${jurisdiction}`, { status: 'active' })).status).toBe(200);
    const task = await create('/tasks', { entity_id: acme, title: 'File annual report', due_date: '2027-03-01' });
    expect((await api.call(client, 'PATCH', `/tasks/${task}`, { status: 'completed' })).status).toBe(200);
    const order = await create('/orders', { entity_id: acme, order_type: 'annual_report' });
    await create('/orders', { entity_id: beta, order_type: 'dissolution' });
    expect((await api.call(client, 'POST', `/orders/${order}/cancel`, { reason: 'filed elsewhere' })).status).toBe(200);
    const content_base64 = Buffer.from('certificate').toString('base64');
    const document = await create('/documents', {
      entity_id: acme,
      order_id: order,
      title: 'Cert',
      document_type: 'certificate',
      content_type: 'text/plain',
      content_base64,
    });
    expect((await api.call(client, 'PATCH', `/documents/${document}`, { title: 'Certificate' })).status).toBe(200);
    await create('/webhook-endpoints', { url: 'https://127.0.0.1:9/filing', event_types: ['order.submitted'] });
  }, 180_000);
  // The last test corrupts a row on purpose.
  afterAll(async () => service?.destroy({ audit: false }));

  /** Every list, item and history (and a document's content) the API answers for what was made. */
  async function snapshot(): Promise<unknown[]> {
    const requests = [...new Set(made.map((m) => m.path))].map((path) => `${path}?limit=200`);
    for (const { path, id } of made) {
      requests.push(`${path}/${id}`);
      if (path !== '/webhook-endpoints') requests.push(`${path}/${id}/history`);
      if (path === '/webhook-endpoints') requests.push(`${path}/${id}/deliveries`);
    }
    requests.push('/webhook-settings');
    const answers = [];
    for (const path of requests) {
      const a = await api.call(client, 'GET', path);
      expect({ path, status: a.status }).toEqual({ path, status: 200 });
      answers.push({ path, etag: a.headers.etag, body: a.body });
    }
    for (const { id } of made.filter((m) => m.path === '/documents')) {
      const res = await fetch(`${service.url}/external-api/v1/documents/${id}/content`, {
        headers: bearer(client.token),
      });
      answers.push({
        path: `/documents/${id}/content`,
        status: res.status,
        type: res.headers.get('content-type'),
        body: await res.text(),
      });
    }
    return answers;
  }

  it('replays 100k events into a new database, swaps it in, and the API answers the same', async () => {
    const before = await snapshot();
    const runner = service.app.get(ProjectionRunner);
    const oldFile = runner.db.name;

    const replay = await runCli(service.dataDir, ['replay'], 150_000);
    expect(replay.stderr).not.toMatch(/error/i);
    expect(replay.code).toBe(0);
    const rebuilt = /from (\d+) events/.exec(replay.stdout);
    expect(Number(rebuilt?.[1])).toBeGreaterThan(VOLUME);
    expect(replay.stdout).toMatch(/replay: \d+ events, \d+ events\/s/); // plain progress lines off a terminal

    await waitUntil(async () => runner.db.name !== oldFile, 10_000);
    expect(await snapshot()).toEqual(before);
    // The swapped-in models keep following the stream.
    const late = await api.create(client, '/entities', { name: 'Delta Inc', entity_type: 'corporation' });
    expect((await api.call(client, 'GET', `/entities/${late.id}`)).status).toBe(200);
  }, 180_000);

  it('audit passes on the live read models and prints their digest', async () => {
    const audit = await runCli(service.dataDir, ['audit'], 150_000);
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/read-model digest sha256:[0-9a-f]{64}/);
    expect(audit.stdout).toContain('audit passed');
  }, 180_000);

  it('audit fails on a corrupted row and names its table and key', async () => {
    const db = service.app.get(ProjectionRunner).db;
    const [acme] = entityIds();
    db.prepare("UPDATE entities SET name = 'Tampered' WHERE id = ?").run(acme);
    const audit = await runCli(service.dataDir, ['audit'], 150_000);
    expect(audit.code).toBe(1);
    expect(audit.stdout).toContain(`DIFF entities ["${acme}"]`);
    expect(audit.stdout).toContain('"name":"Tampered"');
    expect(audit.stderr).toMatch(/audit failed: 1 rows differ/);
  }, 180_000);
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

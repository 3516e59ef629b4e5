/**
 * Issue #14's acceptance at the API, on three service processes (children, each its own DATA_DIR,
 * one SECRETS_KEY) on the EventStoreDB test server, driven round-robin: the next request always
 * goes to the next instance, with no retry and no wait in the client. Last, all three DATA_DIRs are
 * deleted and the instances restarted: everything a client holds still works. The store runs as in
 * production: TLS (the client verifies the node against the CA file) and credentials on every call.
 * (test/e2e/two-instances.e2e.spec.ts covers the same with in-process instances whose read models a
 * test can pause; the webhook lines are in webhooks-cluster.e2e.spec.ts.)
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { bearer, provisionAccount, requestToken } from '../support/auth';
import { startCluster, type Cluster } from '../support/cluster';
import { HttpSession, provisionUser, type TestUser } from '../support/settings-screen';

const V1 = '/external-api/v1';

interface Setup {
  readonly accountId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly user: TestUser;
}

describe('the API on a cluster of three instances (EventStoreDB test server, TLS and credentials)', () => {
  let cluster: Cluster<Setup>;
  let token: string;

  beforeAll(async () => {
    cluster = await startCluster<Setup>({
      size: 3,
      secure: true,
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      setup: async (service) => {
        const client = await provisionAccount(service);
        return { ...client, user: await provisionUser(service, client.accountId) };
      },
    });
    token = await requestToken(cluster.next(), cluster.setup.clientId, cluster.setup.clientSecret);
  }, 120_000);
  afterAll(async () => cluster?.stop());

  async function call(
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const res = await fetch(`${base}${V1}${path}`, {
      method,
      headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
  }

  it('a token from one instance works on the next request to another, 20 of 20', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const fresh = await requestToken(cluster.next(), cluster.setup.clientId, cluster.setup.clientSecret);
      const res = await fetch(`${cluster.next()}${V1}/entities?limit=1`, { headers: bearer(fresh) });
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array(20).fill(200));
  });

  it('a write on one instance is read on the next request to another, 40 of 40', async () => {
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 40; i++) {
      const created = await call(cluster.next(), 'POST', '/entities', { name: `Cluster ${i}`, entity_type: 'llc' });
      expect(created.status).toBe(201);
      const read = await call(cluster.next(), 'GET', `/entities/${created.body.id}`);
      seen.push([read.status, read.body?.name ?? null]);
    }
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => [200, `Cluster ${i}`]));
  });

  it('a cursor from one instance pages on the others, and the pages join up', async () => {
    const all = (await call(cluster.next(), 'GET', '/entities?limit=200')).body.data.map((e: { id: string }) => e.id);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(cluster.next(), 'GET', `/entities?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      paged.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all);
  });

  it('the same Idempotency-Key on every instance makes one order and the same answer', async () => {
    const entity = (await call(cluster.next(), 'POST', '/entities', { name: 'Keyed LLC', entity_type: 'llc' })).body;
    const key = `cluster-${randomUUID()}`;
    const order = { entity_id: entity.id, order_type: 'annual_report' };
    const answers = await Promise.all(
      cluster.instances.map((i) => call(i.url, 'POST', '/orders', order, { 'idempotency-key': key })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const orders = await call(cluster.next(), 'GET', `/orders?entity_id=${entity.id}`);
    expect(orders.body.data).toHaveLength(1);
  });

  it('document bytes uploaded through one instance download from the others; deleted, a 404 on all', async () => {
    const entity = (await call(cluster.next(), 'POST', '/entities', { name: 'Papers LLC', entity_type: 'llc' })).body;
    const bytes = randomBytes(700 * 1024);
    const created = await call(cluster.next(), 'POST', '/documents', {
      entity_id: entity.id,
      title: 'Scan',
      document_type: 'scan',
      content_type: 'application/pdf',
      content_base64: bytes.toString('base64'),
    });
    expect(created.status).toBe(201);
    for (const instance of cluster.instances) {
      const res = await fetch(`${instance.url}${V1}/documents/${created.body.id}/content`, { headers: bearer(token) });
      expect([res.status, Buffer.from(await res.arrayBuffer()).equals(bytes)]).toEqual([200, true]);
    }
    expect((await call(cluster.next(), 'DELETE', `/documents/${created.body.id}`)).status).toBe(204);
    for (const instance of cluster.instances) {
      const res = await fetch(`${instance.url}${V1}/documents/${created.body.id}/content`, { headers: bearer(token) });
      expect(res.status).toBe(404);
    }
  });

  it('a settings session from one instance works on the others; sign-out on one ends it on all', async () => {
    const [a, b, c] = cluster.instances.map((i) => i.url);
    const browser = new HttpSession(a);
    expect((await browser.signIn(cluster.setup.user.email, cluster.setup.user.password)).location).toBe(
      '/settings/profile',
    );
    const kept = browser.cookies.get('filing_session')!;
    for (const url of [b, c]) expect((await browser.at(url).get('/settings/profile')).status).toBe(200);
    const page = await browser.at(b).get('/settings/profile');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
    expect((await browser.at(b).post('/settings/sign-out', { _csrf: csrf })).status).toBe(303);
    for (const url of [a, b, c]) {
      const replay = new HttpSession(url);
      replay.cookies.set('filing_session', kept);
      expect((await replay.get('/settings/profile')).location).toBe('/settings/sign-in?expired=1');
    }
  });

  // Last: it replaces every instance's DATA_DIR.
  it('after all three DATA_DIRs are deleted and the instances restarted, what a client holds still works', async () => {
    const entity = (await call(cluster.next(), 'POST', '/entities', { name: 'Kept LLC', entity_type: 'llc' })).body;
    const cursor: string = (await call(cluster.next(), 'GET', '/entities?limit=2')).body.next_cursor;
    const secondPage = (await call(cluster.next(), 'GET', `/entities?limit=2&cursor=${cursor}`)).body;
    const key = `kept-${randomUUID()}`;
    const order = { entity_id: entity.id, order_type: 'formation' };
    const ordered = await call(cluster.next(), 'POST', '/orders', order, { 'idempotency-key': key });
    const bytes = randomBytes(64 * 1024);
    const document = (
      await call(cluster.next(), 'POST', '/documents', {
        entity_id: entity.id,
        title: 'Kept',
        document_type: 'scan',
        content_type: 'application/octet-stream',
        content_base64: bytes.toString('base64'),
      })
    ).body;
    const endpoint = (await call(cluster.next(), 'POST', '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' }))
      .body;
    const browser = new HttpSession(cluster.next());
    expect((await browser.signIn(cluster.setup.user.email, cluster.setup.user.password)).location).toBe(
      '/settings/profile',
    );

    for (const instance of cluster.instances) {
      await instance.kill('SIGKILL');
      rmSync(instance.dataDir, { recursive: true, force: true });
    }
    for (const instance of cluster.instances) await instance.start();
    await cluster.ready();

    expect((await call(cluster.next(), 'GET', `/entities?limit=2&cursor=${cursor}`)).body).toEqual(secondPage);
    const replayed = await call(cluster.next(), 'POST', '/orders', order, { 'idempotency-key': key });
    expect([replayed.status, replayed.text]).toEqual([201, ordered.text]);
    const content = await fetch(`${cluster.next()}${V1}/documents/${document.id}/content`, { headers: bearer(token) });
    expect(
      createHash('sha256')
        .update(Buffer.from(await content.arrayBuffer()))
        .digest('hex'),
    ).toBe(document.sha256);
    expect((await browser.at(cluster.next()).get('/settings/profile')).status).toBe(200);
    const secrets = await Promise.all(
      cluster.instances.map(
        async (i) => (await call(i.url, 'GET', `/webhook-endpoints/${endpoint.id}/secret`)).body.secret,
      ),
    );
    expect(new Set(secrets)).toEqual(new Set([endpoint.secret]));
  }, 120_000);
});

/**
 * Two service instances on one EventStoreDB (the test server), each with its own DATA_DIR and
 * the same SECRETS_KEY, as docs/operations.md "Running several instances" describes: whatever one
 * instance answered, the other's very next request sees — tokens, writes, cursors,
 * Idempotency-Keys, document bytes, settings sessions. No retries and no waiting in the client:
 * the next request goes straight to the other instance. Last, both instances are replaced by new
 * ones on empty DATA_DIRs, and everything a client holds still works, signing secrets included.
 */
import { ProjectionRunner } from '@filing/platform';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { bearer, provisionAccount, requestToken, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { csrfOf, HttpSession, provisionUser } from '../support/settings-screen';
import { eventually } from '../support/webhooks';

const V1 = '/external-api/v1';
/** Webhook endpoints on a loopback address (created disabled: nothing is ever sent to it). */
const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

describe('two instances on one EventStoreDB', () => {
  let a: TestService;
  let b: TestService;
  let client: ProvisionedClient & { accountId: string };

  beforeAll(async () => {
    a = await startService({ eventStore: 'esdb', env });
    b = await startService({ eventStore: 'esdb', env, reuse: { esdb: a.esdb } });
    client = await provisionAccount(a);
  }, 60_000);
  afterAll(async () => {
    await b?.destroy();
    await a?.destroy();
  });

  async function call(
    on: TestService,
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const res = await fetch(`${on.url}${V1}${path}`, {
      method,
      headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
  }

  async function download(on: TestService, id: string, token: string) {
    const res = await fetch(`${on.url}${V1}/documents/${id}/content`, { headers: bearer(token) });
    return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  }
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('keeps DATA_DIRs apart: each instance has its own read models', () => {
    expect(a.dataDir).not.toBe(b.dataDir);
  });

  it('a token issued by one instance works on the next request to the other, 20 of 20', async () => {
    const results: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [issuer, user] = i % 2 === 0 ? [a, b] : [b, a];
      const token = await requestToken(issuer.url, client.clientId, client.clientSecret);
      results.push((await call(user, 'GET', '/entities?limit=1', token)).status);
    }
    expect(results).toEqual(Array(20).fill(200));
  });

  it('a write answered by one instance is read on the next request to the other, 40 of 40', async () => {
    const seen: Array<[number, string | null]> = [];
    for (let i = 0; i < 40; i++) {
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      const created = await call(writer, 'POST', '/entities', client.token, {
        name: `Entity ${i}`,
        entity_type: 'llc',
      });
      expect(created.status).toBe(201);
      const read = await call(reader, 'GET', `/entities/${created.body.id}`, client.token);
      seen.push([read.status, read.body?.name ?? null]);
    }
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => [200, `Entity ${i}`]));
  });

  it('an instance whose read models lag behind the store waits for them before it answers (the next request after a write elsewhere)', async () => {
    const lagging = b.app.get(ProjectionRunner);
    for (let i = 0; i < 3; i++) {
      // b's projections stand still while a issues a token and takes a write...
      await lagging.stop();
      const token = await requestToken(a.url, client.clientId, client.clientSecret);
      const created = await call(a, 'POST', '/entities', token, { name: `While b lags ${i}`, entity_type: 'llc' });
      // ...and move again a moment after b has the request: b answers only once they have caught up.
      const resume = new Promise<void>((resolve) => setTimeout(() => void lagging.start().then(resolve), 150));
      const read = await call(b, 'GET', `/entities/${created.body.id}`, token);
      await resume;
      expect([read.status, read.body?.name]).toEqual([200, `While b lags ${i}`]);
    }
  });

  it('an update on one instance is what the other shows next (its version and If-Match)', async () => {
    const created = await call(a, 'POST', '/entities', client.token, { name: 'Before', entity_type: 'llc' });
    const updated = await call(
      b,
      'PATCH',
      `/entities/${created.body.id}`,
      client.token,
      { name: 'After' },
      { 'if-match': '"0"' },
    );
    expect(updated.status).toBe(200);
    const read = await call(a, 'GET', `/entities/${created.body.id}`, client.token);
    expect([read.body.name, read.body.version, read.headers.get('etag')]).toEqual(['After', 1, '"1"']);
  });

  it('a cursor from one instance pages on the other, and the pages join up', async () => {
    const own = await provisionAccount(a);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await call(a, 'POST', '/entities', own.token, { name: `Paged ${i}`, entity_type: 'llc' })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const on = page % 2 === 0 ? a : b;
      const res = await call(
        on,
        'GET',
        `/entities?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        own.token,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(ids);
  });

  it('the same Idempotency-Key on both instances makes one order and gives both the same answer', async () => {
    const own = await provisionAccount(a);
    const entity = (await call(a, 'POST', '/entities', own.token, { name: 'Orders Inc', entity_type: 'llc' })).body;
    const order = { entity_id: entity.id, order_type: 'annual_report' };
    for (let round = 0; round < 5; round++) {
      const key = `order-${round}-${randomUUID()}`;
      const [first, second] = await Promise.all(
        [a, b].map((on) => call(on, 'POST', '/orders', own.token, order, { 'idempotency-key': key })),
      );
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.text).toBe(first.text);
      expect(second.headers.get('location')).toBe(first.headers.get('location'));
      // A later retry on either replays it.
      const retry = await call(round % 2 ? a : b, 'POST', '/orders', own.token, order, { 'idempotency-key': key });
      expect([retry.status, retry.headers.get('idempotent-replayed'), retry.text]).toEqual([201, 'true', first.text]);
    }
    const orders = await call(b, 'GET', `/orders?entity_id=${entity.id}`, own.token);
    expect(orders.body.data).toHaveLength(5);
  });

  it('a settings sign-in started on one instance completes on the other; the session works on both; sign-out on one ends it on both', async () => {
    const user = await provisionUser(a, client.accountId);
    const onA = new HttpSession(a.url);
    const onB = onA.at(b.url);
    const form = await onA.get('/settings/sign-in');
    const signedIn = await onB.post('/settings/sign-in', {
      _csrf: csrfOf(form.body),
      email: user.email,
      password: user.password,
    });
    expect([signedIn.status, signedIn.location]).toEqual([303, '/settings/profile']);

    const profileA = await onA.get('/settings/profile');
    expect(profileA.status).toBe(200);
    expect(profileA.body).toContain(user.email);
    // A form of the page served by A is accepted by B: the same session, the same CSRF token.
    const switched = await onB.post('/settings/profile/webhook-notifications', {
      _csrf: csrfOf(profileA.body),
      notifications_enabled: 'true',
    });
    expect(switched.status).toBe(303);
    expect((await onA.get('/settings/profile')).body).toContain('Webhook Notifications are on.');

    const cookie = onA.cookies.get('filing_session')!;
    const out = await onA.post('/settings/sign-out', { _csrf: csrfOf(profileA.body) });
    expect(out.location).toBe('/settings/sign-in?signed_out=1');
    // The browser dropped the cookie; one kept from before the sign-out opens nothing on either instance.
    for (const on of [b, a]) {
      const replay = new HttpSession(on.url);
      replay.cookies.set('filing_session', cookie);
      const res = await replay.get('/settings/profile');
      expect([res.status, res.location]).toEqual([303, '/settings/sign-in?expired=1']);
    }
  });

  it('document bytes uploaded through one instance download from the other; deleted on one, they are a 404 on the other', async () => {
    const own = await provisionAccount(a);
    const entity = (await call(a, 'POST', '/entities', own.token, { name: 'Papers Inc', entity_type: 'llc' })).body;
    for (const [uploader, other] of [
      [a, b],
      [b, a],
    ]) {
      // Several chunks: the content stream is read whole on the other instance.
      const bytes = randomBytes(1024 * 1024 + 7);
      const document = {
        entity_id: entity.id,
        title: 'Scan',
        document_type: 'scan',
        content_type: 'application/pdf',
        content_base64: bytes.toString('base64'),
      };
      const created = await call(uploader, 'POST', '/documents', own.token, document);
      expect([created.status, created.body.sha256]).toEqual([201, sha256(bytes)]);
      const got = await download(other, created.body.id, own.token);
      expect([got.status, got.type, got.bytes.equals(bytes)]).toEqual([200, 'application/pdf', true]);

      expect((await call(uploader, 'DELETE', `/documents/${created.body.id}`, own.token)).status).toBe(204);
      expect((await download(other, created.body.id, own.token)).status).toBe(404);
      expect((await call(other, 'GET', `/documents/${created.body.id}`, own.token)).status).toBe(404);
    }
  });

  // Last: it replaces both instances.
  it('after both DATA_DIRs are deleted and new instances started, every token, cursor, Idempotency-Key, document, session and signing secret a client holds still works', async () => {
    const own = await provisionAccount(a);
    const entities: string[] = [];
    for (let i = 0; i < 5; i++)
      entities.push((await call(a, 'POST', '/entities', own.token, { name: `Kept ${i}`, entity_type: 'llc' })).body.id);
    const firstPage = await call(a, 'GET', '/entities?limit=2', own.token);
    const cursor: string = firstPage.body.next_cursor;
    const key = `order-${randomUUID()}`;
    const order = { entity_id: entities[0], order_type: 'formation' };
    const ordered = await call(b, 'POST', '/orders', own.token, order, { 'idempotency-key': key });
    expect(ordered.status).toBe(201);
    const bytes = randomBytes(300 * 1024);
    const document = await call(a, 'POST', '/documents', own.token, {
      entity_id: entities[0],
      title: 'Kept',
      document_type: 'scan',
      content_type: 'application/octet-stream',
      content_base64: bytes.toString('base64'),
    });
    expect(document.status).toBe(201);
    const user = await provisionUser(a, own.accountId);
    const browser = new HttpSession(b.url);
    expect((await browser.signIn(user.email, user.password)).location).toBe('/settings/profile');
    const endpoint = await call(b, 'POST', '/webhook-endpoints', own.token, { url: 'https://127.0.0.1:9/hooks' });
    expect([endpoint.status, endpoint.body.secret]).toEqual([201, expect.stringMatching(/^whsec_/)]);

    // Both instances go, and their DATA_DIRs with them; new ones start on the same event store.
    for (const old of [a, b]) {
      await old.close();
      rmSync(old.dataDir, { recursive: true, force: true });
    }
    [a, b] = [
      await startService({ eventStore: 'esdb', env, reuse: { esdb: a.esdb } }),
      await startService({ eventStore: 'esdb', env, reuse: { esdb: a.esdb } }),
    ];
    // As a load balancer would: traffic once /readyz says the read models have caught up.
    for (const on of [a, b])
      await eventually(async () => ((await fetch(`${on.url}/readyz`)).status === 200 ? true : undefined), 50);

    expect((await call(b, 'GET', '/entities?limit=1', own.token)).status).toBe(200);
    const nextPage = await call(a, 'GET', `/entities?limit=10&cursor=${encodeURIComponent(cursor)}`, own.token);
    expect([nextPage.status, nextPage.body.data.map((e: { id: string }) => e.id)]).toEqual([200, entities.slice(2)]);
    const replayed = await call(a, 'POST', '/orders', own.token, order, { 'idempotency-key': key });
    expect([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.text]).toEqual([
      201,
      'true',
      ordered.text,
    ]);
    expect((await call(b, 'GET', `/orders?entity_id=${entities[0]}`, own.token)).body.data).toHaveLength(1);
    const got = await download(b, document.body.id, own.token);
    expect([got.status, got.bytes.equals(bytes)]).toEqual([200, true]);
    const profile = await browser.at(a.url).get('/settings/profile');
    expect([profile.status, profile.body.includes(user.email)]).toEqual([200, true]);
    for (const on of [a, b]) {
      const shown = await call(on, 'GET', `/webhook-endpoints/${endpoint.body.id}/secret`, own.token);
      expect([shown.status, shown.body]).toEqual([200, { secret: endpoint.body.secret }]);
    }
  }, 60_000);
});

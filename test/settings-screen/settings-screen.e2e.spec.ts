/**
 * The settings screen over HTTP (no browser): sign-in, cookies, CSRF, session expiry, login
 * throttling, tenant isolation by editing ids and form values, the forms' effects seen through
 * the webhook API. The browser journey is in settings-screen.browser.spec.ts.
 */
import type { FailedAuthThrottle } from '@filing/auth';
import { SettingsSessionStore, SIGN_IN_THROTTLE } from '@filing/webhooks';
import { CreateAccountCommand } from '@filing/auth';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { csrfOf, HttpSession, provisionUser, type TestUser } from '../support/settings-screen';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';
const PROFILE = '/settings/profile';
const ENDPOINTS = '/settings/profile/webhook-endpoints';

interface Tenant {
  readonly user: TestUser;
  readonly api: Api;
  readonly session: HttpSession;
  readonly csrf: string;
}

describe('settings screen over HTTP', () => {
  let service: TestService;
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let sessions: SettingsSessionStore;
  let throttle: FailedAuthThrottle;

  beforeAll(async () => {
    pki = makeTestPki('Settings');
    receiver = await startReceiver(pki);
    service = await startService({
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '5ms,10ms' },
    });
    sessions = service.app.get(SettingsSessionStore);
    throttle = service.app.get<FailedAuthThrottle>(SIGN_IN_THROTTLE);
  });
  afterAll(async () => {
    await service?.destroy();
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });
  afterEach(() => {
    sessions.clock = Date.now;
    throttle.reset();
  });

  /** An account with an API token, a user, and that user signed in. */
  async function tenant(): Promise<Tenant> {
    const account = await provisionAccount(service);
    const user = await provisionUser(service, account.accountId);
    const session = new HttpSession(service.url);
    const res = await session.signIn(user.email, user.password);
    expect(res.status).toBe(303);
    expect(res.location).toBe(PROFILE);
    return { user, api: apiClient(service.url, account.token), session, csrf: await session.csrf() };
  }

  async function createEndpoint(
    t: Tenant,
    url = receiver.url,
    extra: Record<string, string | string[]> = {},
  ): Promise<string> {
    const before = (await t.api('GET', `${V1}/webhook-endpoints`)).body.data.length;
    const res = await t.session.post(ENDPOINTS, { _csrf: t.csrf, url, description: 'Main hook', ...extra });
    expect(res.status).toBe(303);
    const list = (await t.api('GET', `${V1}/webhook-endpoints`)).body.data;
    expect(list).toHaveLength(before + 1);
    return list[list.length - 1].id as string;
  }

  describe('sign-in', () => {
    it('sends a visitor without a session to the sign-in page, which sets an HttpOnly SameSite=Strict token cookie', async () => {
      const visitor = new HttpSession(service.url);
      const profile = await visitor.get(PROFILE);
      expect(profile.status).toBe(303);
      expect(profile.location).toBe('/settings/sign-in');
      expect((await visitor.get('/settings')).location).toBe('/settings/sign-in');

      const page = await visitor.get('/settings/sign-in');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(page.body).toContain('<label for="email">Email</label>');
      expect(page.body).toContain('<label for="password">Password</label>');
      expect(page.setCookies).toHaveLength(1);
      expect(page.setCookies[0]).toMatch(/^filing_signin_csrf=[\w-]{43}; Path=\/settings; HttpOnly; SameSite=Strict$/);
    });

    it('signs a user in with a server-side session cookie (HttpOnly, SameSite=Strict, not Secure over plain HTTP)', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId, `Mixed.Case-${Date.now()}@Example.com`);
      const session = new HttpSession(service.url);
      const res = await session.signIn(`  ${user.email.toUpperCase()} `, user.password);
      expect(res.status).toBe(303);
      expect(res.location).toBe(PROFILE);
      const cookie = res.setCookies.find((c) => c.startsWith('filing_session='))!;
      expect(cookie).toMatch(/^filing_session=[\w-]{43}; Path=\/settings; HttpOnly; SameSite=Strict$/);
      expect(res.setCookies.some((c) => c.startsWith('filing_signin_csrf=;') && c.includes('Max-Age=0'))).toBe(true);

      const profile = await session.get(PROFILE);
      expect(profile.status).toBe(200);
      expect(profile.body).toContain(user.email.toLowerCase());
      expect(profile.body).toContain(account.accountId);
      // Nothing of the API's credentials reaches the browser.
      expect(profile.body).not.toContain(account.token);
      expect(profile.body).not.toContain(account.clientSecret);
      expect(profile.body).not.toContain(account.clientId);
    });

    it('marks both cookies Secure over HTTPS: served directly (TLS_CERT_FILE) or behind a proxy saying X-Forwarded-Proto: https', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);
      const proxied = new HttpSession(service.url, { 'x-forwarded-proto': 'https' });
      expect((await proxied.get('/settings/sign-in')).setCookies[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      const signedIn = await proxied.signIn(user.email, user.password);
      expect(signedIn.setCookies.find((c) => c.startsWith('filing_session='))).toMatch(
        /; HttpOnly; SameSite=Strict; Secure$/,
      );

      const tls = await startService({
        env: { TLS_CERT_FILE: join(pki.dir, 'leaf.crt'), TLS_KEY_FILE: join(pki.dir, 'leaf.key') },
      });
      const agent = new Agent({ connect: { ca: pki.caPem } });
      try {
        expect(tls.url).toMatch(/^https:/);
        const { accountId } = await tls.app.get(CommandBus).execute(
          new CreateAccountCommand('TLS', {
            account_id: null,
            actor: 'operator:test',
            correlation_id: randomUUID(),
            causation_id: null,
          }),
        );
        const tlsUser = await provisionUser(tls, accountId);
        const direct = new HttpSession(tls.url, {}, ((url: string, init: object) =>
          undiciFetch(url, { ...init, dispatcher: agent })) as never);
        const res = await direct.signIn(tlsUser.email, tlsUser.password);
        expect(res.status).toBe(303);
        expect(res.setCookies.find((c) => c.startsWith('filing_session='))).toMatch(
          /^filing_session=[\w-]{43}; Path=\/settings; HttpOnly; SameSite=Strict; Secure$/,
        );
        expect((await direct.get(PROFILE)).status).toBe(200);
      } finally {
        await tls.destroy();
        await agent.close();
      }
    });

    it('answers an unknown settings path with the HTML 404 page', async () => {
      const visitor = new HttpSession(service.url);
      for (const path of ['/settings/nope', '/settings/profile/nope/deeper']) {
        const res = await visitor.get(path);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      }
      // The API's own 404s stay problem+json.
      expect((await fetch(`${service.url}/nope`)).headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it('refuses a wrong password or an unknown email with the same 401 page, and sets no session', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);
      for (const [email, password] of [
        [user.email, 'wrong-password'],
        ['nobody@example.com', user.password],
        [user.email, ''],
      ]) {
        const session = new HttpSession(service.url);
        const res = await session.signIn(email, password);
        expect(res.status).toBe(401);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(res.body).toContain('The email or password is not correct.');
        expect(session.cookies.has('filing_session')).toBe(false);
      }
    });

    it('refuses a sign-in form without its token (403, an HTML page, no session)', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);
      const session = new HttpSession(service.url);
      const page = await session.get('/settings/sign-in');
      const token = csrfOf(page.body);
      for (const fields of [
        { email: user.email, password: user.password },
        { _csrf: 'x'.repeat(43), email: user.email, password: user.password },
      ]) {
        const res = await session.post('/settings/sign-in', fields);
        expect(res.status).toBe(403);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(session.cookies.has('filing_session')).toBe(false);
      }
      // The token without its cookie (another browser) is refused too.
      const stranger = new HttpSession(service.url);
      const res = await stranger.post('/settings/sign-in', {
        _csrf: token,
        email: user.email,
        password: user.password,
      });
      expect(res.status).toBe(403);
    });
  });

  describe('sign-out and expiry', () => {
    it('signs out (the old cookie no longer works); sign-out needs the CSRF token', async () => {
      const t = await tenant();
      const oldCookie = t.session.cookies.get('filing_session')!;
      expect((await t.session.post('/settings/sign-out', {})).status).toBe(403);
      expect((await t.session.get(PROFILE)).status).toBe(200);

      const out = await t.session.post('/settings/sign-out', { _csrf: t.csrf });
      expect(out.status).toBe(303);
      expect(out.location).toBe('/settings/sign-in?signed_out=1');
      expect(out.setCookies.some((c) => c.startsWith('filing_session=;') && c.includes('Max-Age=0'))).toBe(true);

      const replay = new HttpSession(service.url);
      replay.cookies.set('filing_session', oldCookie);
      const res = await replay.get(PROFILE);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/settings/sign-in?expired=1');
    });

    it('ends a session after 30 idle minutes', async () => {
      const t = await tenant();
      const start = Date.now();
      sessions.clock = () => start + 29 * 60_000;
      expect((await t.session.get(PROFILE)).status).toBe(200);
      sessions.clock = () => start + 29 * 60_000 + 30 * 60_000;
      const res = await t.session.get(PROFILE);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/settings/sign-in?expired=1');
      const page = await t.session.get('/settings/sign-in?expired=1');
      expect(page.body).toContain('Your session has ended');
      // A form of the expired session does nothing.
      const post = await t.session.post(ENDPOINTS, { _csrf: t.csrf, url: receiver.url });
      expect(post.status).toBe(303);
      expect((await t.api('GET', `${V1}/webhook-endpoints`)).body.data).toEqual([]);
    });

    it('ends a session 12 hours after sign-in, even one in constant use', async () => {
      const t = await tenant();
      const start = Date.now();
      let minutes = 0;
      for (; minutes < 12 * 60 - 20; minutes += 20) {
        sessions.clock = () => start + minutes * 60_000;
        expect((await t.session.get(PROFILE)).status).toBe(200);
      }
      sessions.clock = () => start + 12 * 60 * 60_000;
      expect((await t.session.get(PROFILE)).status).toBe(303);
    });
  });

  describe('login throttling', () => {
    it('answers 429 with Retry-After after 5 failures for one email, even with the right password; other emails still sign in', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);
      const other = await provisionUser(service, account.accountId);
      const session = new HttpSession(service.url);
      for (let i = 0; i < 5; i++) expect((await session.signIn(user.email, `wrong-${i}`)).status).toBe(401);
      const blocked = await session.signIn(user.email, user.password);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(blocked.headers.get('content-type')).toMatch(/^text\/html/);
      expect(blocked.body).toContain('Too many failed sign-in attempts');
      expect(session.cookies.has('filing_session')).toBe(false);
      expect((await new HttpSession(service.url).signIn(other.email, other.password)).status).toBe(303);
    });

    it('answers 429 to every email from an address after 20 failures from it', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);
      const session = new HttpSession(service.url);
      for (let i = 0; i < 20; i++)
        expect((await session.signIn(`guess-${i}@example.com`, 'password1')).status).toBe(401);
      expect((await session.signIn(user.email, user.password)).status).toBe(429);
    });
  });

  describe('CSRF on every form', () => {
    it('refuses each form of a signed-in user without the session token (403) and changes nothing', async () => {
      const t = await tenant();
      const id = await createEndpoint(t);
      const other = await tenant();
      const forms: Array<[string, Record<string, string>]> = [
        ['/settings/profile/webhook-notifications', { notifications_enabled: 'true' }],
        [ENDPOINTS, { url: 'https://example.com/hook' }],
        [`${ENDPOINTS}/${id}`, { url: 'https://example.com/changed' }],
        [`${ENDPOINTS}/${id}/enable`, {}],
        [`${ENDPOINTS}/${id}/delete`, {}],
        [`${ENDPOINTS}/${id}/secret`, {}],
        [`${ENDPOINTS}/${id}/rotate-secret`, {}],
        [`${ENDPOINTS}/${id}/recover`, { since: '2000-01-01T00:00' }],
        [`${ENDPOINTS}/${id}/replay`, { since: '2000-01-01T00:00' }],
        ['/settings/sign-out', {}],
      ];
      for (const [path, fields] of forms) {
        for (const token of [undefined, '', 'forged-token', other.csrf]) {
          const res = await t.session.post(path, { ...fields, _csrf: token });
          expect({ path, token, status: res.status }).toEqual({ path, token, status: 403 });
          expect(res.headers.get('content-type')).toMatch(/^text\/html/);
          expect(res.body).not.toContain('whsec_');
        }
      }
      const endpoint = (await t.api('GET', `${V1}/webhook-endpoints/${id}`)).body;
      expect(endpoint).toMatchObject({ url: receiver.url, enabled: false, version: 0 });
      expect((await t.api('GET', `${V1}/webhook-endpoints`)).body.data).toHaveLength(1);
      expect((await t.api('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: false });
      expect((await t.session.get(PROFILE)).status).toBe(200);
    });
  });

  describe('webhook settings', () => {
    it('shows the switch, the endpoints and the Create Endpoint form with the catalog grouped by category', async () => {
      const t = await tenant();
      const page = await t.session.get(PROFILE);
      expect(page.body).toContain('Profile Settings');
      expect(page.body).toContain('aria-current="page">Profile</a>');
      expect(page.body).toContain('Webhook Settings');
      expect(page.body).toMatch(/role="switch" aria-checked="false"/);
      expect(page.body).toContain('No endpoints yet');
      expect(page.body).toContain('<label for="url">Endpoint URL');
      expect(page.body).toContain('<label for="description">Description</label>');
      expect(page.body).toContain('<legend>Event Types</legend>');
      for (const category of ['Entities', 'Documents', 'Jurisdictions', 'Tasks', 'Orders', 'Webhooks'])
        expect(page.body).toContain(`<legend>${category}</legend>`);
      const labels = [...page.body.matchAll(/name="event_types" value="([\w.]+)"[^>]*> ([^<]+)<\/label>/g)].map((m) => [
        m[1],
        m[2],
      ]);
      expect(labels).toEqual([
        ['entity.created', 'New Entity'],
        ['entity.updated', 'Update Entity'],
        ['document.created', 'New Document'],
        ['document.updated', 'Update Document'],
        ['document.deleted', 'Delete Document'],
        ['jurisdiction.created', 'New Jurisdiction'],
        ['jurisdiction.updated', 'Update Jurisdiction'],
        ['task.created', 'New Task Instance'],
        ['order.submitted', 'Order Submitted'],
        ['order.cancelled', 'Order Cancelled'],
        ['order.completed', 'Order Completed'],
        ['webhook_endpoint.disabled', 'Endpoint Disabled'],
        ['webhook_endpoint.failing', 'Endpoint Failing'],
        ['webhook_delivery.failed', 'Delivery Failed'],
      ]);
    });

    it('switches Webhook Notifications on and off (the account switch of the API)', async () => {
      const t = await tenant();
      const on = await t.session.post('/settings/profile/webhook-notifications', {
        _csrf: t.csrf,
        notifications_enabled: 'true',
      });
      expect(on.status).toBe(303);
      expect((await t.api('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: true });
      const page = await t.session.get(PROFILE);
      expect(page.body).toMatch(/role="switch" aria-checked="true"/);
      expect(page.body).toContain('Webhook Notifications are on.');
      await t.session.post('/settings/profile/webhook-notifications', {
        _csrf: t.csrf,
        notifications_enabled: 'false',
      });
      expect((await t.api('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: false });
    });

    it('shows the HTTPS error next to the URL field for an http: URL and saves nothing; keeps what was typed', async () => {
      const t = await tenant();
      const res = await t.session.post(ENDPOINTS, {
        _csrf: t.csrf,
        url: 'http://example.com/hook',
        description: 'Plain <b>HTTP</b>',
        event_types: ['order.submitted', 'task.created'],
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.body).toMatch(
        /<input type="url" id="url"[^>]*aria-invalid="true" aria-describedby="url-hint url-error">/,
      );
      expect(res.body).toMatch(
        /<p class="field-error" id="url-error"><span class="visually-hidden">Error: <\/span>[^<]*HTTPS[^<]*<\/p>/i,
      );
      expect(res.body).toContain('value="http://example.com/hook"');
      expect(res.body).toContain('value="Plain &lt;b&gt;HTTP&lt;/b&gt;"');
      expect(res.body).toMatch(/value="order.submitted" id="event-type-order-submitted" checked/);
      expect(res.body).not.toMatch(/value="order.cancelled"[^>]* checked/);
      expect((await t.api('GET', `${V1}/webhook-endpoints`)).body.data).toEqual([]);

      for (const [fields, message] of [
        [{ url: '' }, 'Enter the endpoint URL'],
        [
          { url: 'https://example.com/hook', event_types: ['entity.created', 'no.such'] },
          'Unknown event types: no.such',
        ],
        [
          { url: 'https://example.com/hook', description: 'x'.repeat(501) },
          'description must be shorter than or equal to 500 characters',
        ],
      ] as const) {
        const bad = await t.session.post(ENDPOINTS, { _csrf: t.csrf, ...fields });
        expect(bad.status).toBe(400);
        expect(bad.body).toContain(message);
      }
      expect((await t.api('GET', `${V1}/webhook-endpoints`)).body.data).toEqual([]);
    });

    it('creates an endpoint (disabled; no box checked = all events), lists it, edits, enables, disables and deletes it', async () => {
      const t = await tenant();
      const all = await createEndpoint(t, 'https://127.0.0.1:9/all');
      const some = await createEndpoint(t, 'https://127.0.0.1:9/some', {
        event_types: ['entity.created', 'order.completed'],
      });
      expect((await t.api('GET', `${V1}/webhook-endpoints/${all}`)).body).toMatchObject({
        enabled: false,
        event_types: [],
        description: 'Main hook',
      });
      expect((await t.api('GET', `${V1}/webhook-endpoints/${some}`)).body.event_types).toEqual([
        'entity.created',
        'order.completed',
      ]);

      const page = (await t.session.get(PROFILE)).body;
      expect(page).toContain('was created. It stays disabled until you enable it.');
      const item = (id: string, body: string) =>
        body.slice(
          body.indexOf(`<li id="endpoint-${id}"`),
          body.indexOf('</li>\n', body.indexOf(`<li id="endpoint-${id}"`)),
        );
      expect(item(all, page)).toContain('https://127.0.0.1:9/all');
      expect(item(all, page)).toContain('<span class="badge disabled">Disabled</span>');
      expect(item(all, page)).toContain('All events');
      expect(item(some, page)).toContain('New Entity');
      expect(item(some, page)).toContain('Order Completed');

      const edited = await t.session.post(`${ENDPOINTS}/${some}`, {
        _csrf: t.csrf,
        url: 'https://127.0.0.1:9/edited',
        description: '',
        event_types: 'task.created',
      });
      expect(edited.status).toBe(303);
      expect((await t.api('GET', `${V1}/webhook-endpoints/${some}`)).body).toMatchObject({
        url: 'https://127.0.0.1:9/edited',
        description: null,
        event_types: ['task.created'],
      });
      const badEdit = await t.session.post(`${ENDPOINTS}/${some}`, { _csrf: t.csrf, url: 'http://127.0.0.1:9/x' });
      expect(badEdit.status).toBe(400);
      expect(badEdit.body).toContain('id="url-error"');
      expect((await t.api('GET', `${V1}/webhook-endpoints/${some}`)).body.url).toBe('https://127.0.0.1:9/edited');

      expect((await t.session.post(`${ENDPOINTS}/${all}/enable`, { _csrf: t.csrf })).location).toBe(
        `${PROFILE}#endpoint-${all}`,
      );
      expect((await t.api('GET', `${V1}/webhook-endpoints/${all}`)).body.enabled).toBe(true);
      expect(item(all, (await t.session.get(PROFILE)).body)).toContain('<span class="badge enabled">Enabled</span>');
      expect((await t.session.post(`${ENDPOINTS}/${all}/disable`, { _csrf: t.csrf, back: 'endpoint' })).location).toBe(
        `${ENDPOINTS}/${all}`,
      );
      expect((await t.api('GET', `${V1}/webhook-endpoints/${all}`)).body.enabled).toBe(false);
      // An outside redirect target is ignored.
      expect(
        (await t.session.post(`${ENDPOINTS}/${all}/enable`, { _csrf: t.csrf, back: 'https://evil.example' })).location,
      ).toBe(`${PROFILE}#endpoint-${all}`);

      const confirm = await t.session.get(`${ENDPOINTS}/${all}/delete`);
      expect(confirm.status).toBe(200);
      expect(confirm.body).toContain('Delete <span class="endpoint-url">https://127.0.0.1:9/all</span>?');
      expect((await t.session.post(`${ENDPOINTS}/${all}/delete`, { _csrf: t.csrf })).status).toBe(303);
      expect((await t.api('GET', `${V1}/webhook-endpoints/${all}`)).status).toBe(404);
      expect((await t.session.get(`${ENDPOINTS}/${all}`)).status).toBe(404);
    });

    it('sets, shows and clears the rate limit in the form; a bad one is named next to its field and saves nothing', async () => {
      const t = await tenant();
      const id = await createEndpoint(t, 'https://127.0.0.1:9/rate', { rate_limit_per_second: '5' });
      expect((await t.api('GET', `${V1}/webhook-endpoints/${id}`)).body.rate_limit_per_second).toBe(5);
      const page = (await t.session.get(`${ENDPOINTS}/${id}`)).body;
      expect(page).toContain('<dt>Rate limit</dt><dd>5 per second</dd>');
      expect(page).toMatch(
        /<input type="number" id="rate-limit" name="rate_limit_per_second" min="1" max="1000"[^>]* value="5"/,
      );
      for (const bad of ['0', '1001', '2.5', 'fast']) {
        const res = await t.session.post(`${ENDPOINTS}/${id}`, {
          _csrf: t.csrf,
          url: 'https://127.0.0.1:9/rate',
          rate_limit_per_second: bad,
        });
        expect(res.status).toBe(400);
        expect(res.body).toMatch(
          /<input type="number" id="rate-limit"[^>]*aria-invalid="true" aria-describedby="rate-limit-hint rate-limit-error">/,
        );
        expect(res.body).toContain('rate_limit_per_second must be a whole number from 1 to 1000, or null for no limit');
      }
      expect((await t.api('GET', `${V1}/webhook-endpoints/${id}`)).body).toMatchObject({
        rate_limit_per_second: 5,
        version: 0,
      });
      const cleared = await t.session.post(`${ENDPOINTS}/${id}`, {
        _csrf: t.csrf,
        url: 'https://127.0.0.1:9/rate',
        rate_limit_per_second: '',
      });
      expect(cleared.status).toBe(303);
      expect((await t.api('GET', `${V1}/webhook-endpoints/${id}`)).body.rate_limit_per_second).toBeNull();
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain(
        '<dt>Rate limit</dt><dd><span class="hint">No limit</span></dd>',
      );
    });

    it('reveals and rotates the signing secret (the API’s secret), never cached', async () => {
      const t = await tenant();
      const id = await createEndpoint(t);
      const apiSecret = (await t.api('GET', `${V1}/webhook-endpoints/${id}/secret`)).body.secret as string;
      const details = await t.session.get(`${ENDPOINTS}/${id}`);
      expect(details.body).not.toContain('whsec_');

      const revealed = await t.session.post(`${ENDPOINTS}/${id}/secret`, { _csrf: t.csrf });
      expect(revealed.status).toBe(200);
      expect(revealed.headers.get('cache-control')).toBe('no-store');
      expect(revealed.body).toContain(`<output id="secret-value" class="secret">${apiSecret}</output>`);

      const rotated = await t.session.post(`${ENDPOINTS}/${id}/rotate-secret`, { _csrf: t.csrf });
      expect(rotated.status).toBe(200);
      const fresh = /<output id="secret-value" class="secret">(whsec_[^<]+)<\/output>/.exec(rotated.body)![1];
      expect(fresh).not.toBe(apiSecret);
      expect((await t.api('GET', `${V1}/webhook-endpoints/${id}/secret`)).body.secret).toBe(fresh);
      expect(rotated.body).toContain('keeps signing beside it for 24 hours');
    });

    it('lists recent deliveries with status and attempts, and resends a failed one', async () => {
      const t = await tenant();
      const id = await createEndpoint(t, receiver.url.replace('/hook', '/resend'));
      await t.session.post(`${ENDPOINTS}/${id}/enable`, { _csrf: t.csrf });
      await t.session.post('/settings/profile/webhook-notifications', { _csrf: t.csrf, notifications_enabled: 'true' });
      receiver.script({ status: 400 });
      expect((await t.api('POST', `${V1}/entities`, { name: 'Resend LLC', entity_type: 'llc' })).status).toBe(201);
      const failed = await eventually(async () => {
        const list = (await t.api('GET', `${V1}/webhook-endpoints/${id}/deliveries`)).body.data;
        return list[0]?.status === 'failed' ? list[0] : undefined;
      });

      const page = await t.session.get(`${ENDPOINTS}/${id}`);
      const row = page.body.slice(page.body.indexOf(`<tr id="delivery-${failed.id}">`));
      expect(row).toMatch(
        /<td data-label="Event"><a href="\/settings\/profile\/events\/[\w-]+\?endpoint=[\w-]+">New Entity<span class="visually-hidden">: where this event went<\/span><\/a> <span class="hint">\(entity.created\)<\/span><\/td>\s*<td data-label="Status"><span class="badge failed">failed<\/span><\/td>\s*<td data-label="Attempts">1<\/td>/,
      );
      expect(row).toContain(`action="/settings/profile/webhook-deliveries/${failed.id}/redeliver"`);

      const resend = await t.session.post(`/settings/profile/webhook-deliveries/${failed.id}/redeliver`, {
        _csrf: t.csrf,
      });
      expect(resend.status).toBe(303);
      expect(resend.location).toBe(`${ENDPOINTS}/${id}#deliveries`);
      const delivered = await eventually(async () => {
        const d = (await t.api('GET', `/external-api/v1/webhook-deliveries/${failed.id}`)).body;
        return d.status === 'delivered' ? d : undefined;
      });
      expect(delivered.attempt_count).toBe(2);
      const after = await t.session.get(`${ENDPOINTS}/${id}`);
      expect(after.body).toContain('The delivery will be sent again.');
      expect(after.body).toMatch(
        /<span class="badge delivered">delivered<\/span><\/td>\s*<td data-label="Attempts">2<\/td>/,
      );
      // A delivered one cannot be resent: 409 page, nothing appended.
      const again = await t.session.post(`/settings/profile/webhook-deliveries/${failed.id}/redeliver`, {
        _csrf: t.csrf,
      });
      expect(again.status).toBe(409);
      expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    });

    it('says why and since when an endpoint is disabled: not enabled yet, by a user, or gone (410)', async () => {
      const t = await tenant();
      const id = await createEndpoint(t, receiver.url.replace('/hook', '/gone'));
      const note = async (path: string) =>
        /<p class="disabled-reason" id="endpoint-[^"]+-disabled">([^<]*)<time datetime="([^"]+)">/.exec(
          (await t.session.get(path)).body,
        );
      expect((await note(`${ENDPOINTS}/${id}`))?.[1]).toBe('Not enabled yet, since ');

      await t.session.post(`${ENDPOINTS}/${id}/enable`, { _csrf: t.csrf });
      expect(await note(`${ENDPOINTS}/${id}`)).toBeNull();
      await t.session.post(`${ENDPOINTS}/${id}/disable`, { _csrf: t.csrf });
      expect((await note(`${ENDPOINTS}/${id}`))?.[1]).toBe('Disabled by a user, since ');

      await t.session.post(`${ENDPOINTS}/${id}/enable`, { _csrf: t.csrf });
      await t.session.post('/settings/profile/webhook-notifications', { _csrf: t.csrf, notifications_enabled: 'true' });
      receiver.script({ status: 410 });
      const before = new Date().toISOString();
      expect((await t.api('POST', `${V1}/entities`, { name: 'Gone LLC', entity_type: 'llc' })).status).toBe(201);
      const gone = await eventually(async () => {
        const ep = (await t.api('GET', `${V1}/webhook-endpoints/${id}`)).body;
        return ep.disabled_reason === 'gone' ? ep : undefined;
      });
      expect(gone.enabled).toBe(false);
      for (const page of [`${ENDPOINTS}/${id}`, PROFILE]) {
        const [, reason, since] = (await note(page))!;
        expect([page, reason, since >= before]).toEqual([
          page,
          'Disabled automatically: the receiver answered 410 Gone, since ',
          true,
        ]);
      }
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain(
        '<span class="badge disabled">Disabled</span>',
      );
    });

    it("shows each endpoint's last delivery, 24 h success rate and failing since, and recovers its failed deliveries", async () => {
      const t = await tenant();
      const id = await createEndpoint(t, receiver.url.replace('/hook', '/health'));
      await t.session.post(`${ENDPOINTS}/${id}/enable`, { _csrf: t.csrf });
      await t.session.post('/settings/profile/webhook-notifications', { _csrf: t.csrf, notifications_enabled: 'true' });
      const item = (body: string) =>
        body.slice(
          body.indexOf(`<li id="endpoint-${id}"`),
          body.indexOf('</li>\n', body.indexOf(`<li id="endpoint-${id}"`)),
        );
      expect(item((await t.session.get(PROFILE)).body)).toMatch(
        /<dt>Last delivery<\/dt><dd><span class="hint">None yet<\/span><\/dd>\s*<dt>Success rate \(24 h\)<\/dt><dd><span class="hint">No finished deliveries<\/span><\/dd>\s*<dt>Failing since<\/dt><dd><span class="hint">Not failing<\/span><\/dd>/,
      );

      // One delivered, then two refused at once (400: failed).
      const deliveries = async () =>
        (await t.api('GET', `${V1}/webhook-endpoints/${id}/deliveries`)).body.data as Array<{
          id: string;
          status: string;
        }>;
      const settled = (n: number) =>
        eventually(async () => {
          const list = await deliveries();
          return list.length === n && list.every((d) => d.status !== 'pending') ? list : undefined;
        });
      receiver.script({ status: 200 });
      await t.api('POST', `${V1}/entities`, { name: 'Health 1 LLC', entity_type: 'llc' });
      await settled(1);
      receiver.script({ status: 400 }, { status: 400 });
      await t.api('POST', `${V1}/entities`, { name: 'Health 2 LLC', entity_type: 'llc' });
      await settled(2);
      await t.api('POST', `${V1}/entities`, { name: 'Health 3 LLC', entity_type: 'llc' });
      const list = await settled(3);
      const detail = async (deliveryId: string) => (await t.api('GET', `${V1}/webhook-deliveries/${deliveryId}`)).body;
      const [, firstFailed, lastFailed] = await Promise.all(list.map((d) => detail(d.id)));
      expect([firstFailed.status, lastFailed.status]).toEqual(['failed', 'failed']);

      const before = item((await t.session.get(PROFILE)).body);
      expect(before).toContain(
        `<dt>Last delivery</dt><dd><span class="badge failed">failed</span> <time datetime="${lastFailed.attempts[0].attempted_at}">`,
      );
      expect(before).toContain('<dt>Success rate (24 h)</dt><dd>33% <span class="hint">(1 of 3 delivered)</span></dd>');
      expect(before).toContain(
        `<dt>Failing since</dt><dd><strong><time datetime="${firstFailed.attempts[0].attempted_at}">`,
      );

      // The endpoint page's Recover form: a bad time is refused and changes nothing; a good one resends both.
      const page = await t.session.get(`${ENDPOINTS}/${id}`);
      expect(page.body).toContain('<h2 id="recover-heading">Recover failed deliveries</h2>');
      expect(page.body).toMatch(new RegExp(`<form method="post" action="${ENDPOINTS}/${id}/recover">`));
      expect(page.body).toMatch(
        /<input type="datetime-local" id="recover-since" name="since" value="\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}" step="1" required/,
      );
      const bad = await t.session.post(`${ENDPOINTS}/${id}/recover`, { _csrf: t.csrf, since: 'last tuesday' });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
      expect(bad.body).toContain('Enter the date and time (UTC) to recover failed deliveries from.');
      expect((await detail(lastFailed.id)).attempt_count).toBe(1);

      const recovered = await t.session.post(`${ENDPOINTS}/${id}/recover`, {
        _csrf: t.csrf,
        since: '2000-01-01T00:00',
      });
      expect(recovered.status).toBe(303);
      expect(recovered.location).toBe(`${ENDPOINTS}/${id}#deliveries`);
      await eventually(async () => ((await deliveries()).every((d) => d.status === 'delivered') ? true : undefined));
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain('2 failed deliveries will be sent again.');
      const after = item((await t.session.get(PROFILE)).body);
      expect(after).toContain('<dt>Success rate (24 h)</dt><dd>100% <span class="hint">(3 of 3 delivered)</span></dd>');
      expect(after).toContain('<dt>Failing since</dt><dd><span class="hint">Not failing</span></dd>');
      expect(after).toContain('<dt>Last delivery</dt><dd><span class="badge delivered">delivered</span>');
      // Nothing failed is left: a second recovery says so.
      await t.session.post(`${ENDPOINTS}/${id}/recover`, { _csrf: t.csrf, since: '2000-01-01T00:00:00' });
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain('No failed deliveries to recover since then.');
    });

    it("shows where an event went from the deliveries list, only the account's own, and replays history to an endpoint", async () => {
      const t = await tenant();
      await t.session.post('/settings/profile/webhook-notifications', { _csrf: t.csrf, notifications_enabled: 'true' });
      const id = await createEndpoint(t, receiver.url.replace('/hook', '/timeline'));
      await t.session.post(`${ENDPOINTS}/${id}/enable`, { _csrf: t.csrf });
      receiver.script({ status: 500 });
      expect((await t.api('POST', `${V1}/entities`, { name: 'Timeline LLC', entity_type: 'llc' })).status).toBe(201);
      const delivered = await eventually(async () => {
        const list = (await t.api('GET', `${V1}/webhook-endpoints/${id}/deliveries`)).body.data;
        return list[0]?.status === 'delivered' ? list[0] : undefined;
      });
      const link = `/settings/profile/events/${delivered.event_id}?endpoint=${id}`;
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain(`<a href="${link}">`);
      const timeline = await t.session.get(link);
      expect(timeline.status).toBe(200);
      expect(timeline.body).toContain('<h1>Where this event went</h1>');
      expect(timeline.body).toContain(`<code>${delivered.event_id}</code>`);
      const item = timeline.body.slice(timeline.body.indexOf(`<li id="delivery-${delivered.id}">`));
      expect(item).toContain(`href="${ENDPOINTS}/${id}"`);
      expect(item).toMatch(/HTTP 500<\/span>[\s\S]*HTTP 200<\/span>/);
      const other = await tenant();
      expect((await other.session.get(link)).status).toBe(404);

      // Replay: the page's form; the history goes to the endpoint again with its original webhook-id.
      const page = await t.session.get(`${ENDPOINTS}/${id}`);
      expect(page.body).toContain('<h2 id="replay-heading">Replay notifications</h2>');
      expect(page.body).toContain(`<form method="post" action="${ENDPOINTS}/${id}/replay">`);
      const bad = await t.session.post(`${ENDPOINTS}/${id}/replay`, { _csrf: t.csrf, since: 'yesterday' });
      expect(bad.status).toBe(400);
      expect(bad.body).toContain('Enter the date and time (UTC) to replay notifications from.');
      const before = receiver.requests.length;
      const replayed = await t.session.post(`${ENDPOINTS}/${id}/replay`, { _csrf: t.csrf, since: '2000-01-01T00:00' });
      expect(replayed.status).toBe(303);
      expect((await t.session.get(`${ENDPOINTS}/${id}`)).body).toContain(
        '1 notification will be sent to this endpoint, after its live deliveries.',
      );
      await receiver.waitFor(before + 1);
      expect(receiver.requests.slice(before).map((q) => q.headers['webhook-id'])).toEqual([delivered.event_id]);
    });

    it('escapes what users typed', async () => {
      const t = await tenant();
      await createEndpoint(t, 'https://127.0.0.1:9/x?a=<script>', { description: '<img src=x onerror=alert(1)>' });
      const page = (await t.session.get(PROFILE)).body;
      expect(page).not.toContain('<img src=x');
      expect(page).not.toContain('<script>');
      expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    });
  });

  describe('tenant isolation', () => {
    it("never shows or changes another account's endpoints or deliveries, whatever id is put in a URL or form (404)", async () => {
      const a = await tenant();
      const b = await tenant();
      const bEndpoint = await createEndpoint(b, receiver.url.replace('/hook', '/tenant-b'), {
        description: 'B private',
      });
      await b.session.post(`${ENDPOINTS}/${bEndpoint}/enable`, { _csrf: b.csrf });
      await b.session.post('/settings/profile/webhook-notifications', { _csrf: b.csrf, notifications_enabled: 'true' });
      receiver.script({ status: 400 });
      await b.api('POST', `${V1}/entities`, { name: 'B Corp', entity_type: 'corporation' });
      const bDelivery = await eventually(async () => {
        const list = (await b.api('GET', `${V1}/webhook-endpoints/${bEndpoint}/deliveries`)).body.data;
        return list[0]?.status === 'failed' ? list[0] : undefined;
      });
      const bBefore = (await b.api('GET', `${V1}/webhook-endpoints/${bEndpoint}`)).body;

      const aPage = (await a.session.get(PROFILE)).body;
      expect(aPage).not.toContain('tenant-b');
      expect(aPage).not.toContain('B private');

      const attempts: Array<[string, string, Record<string, string>?]> = [
        ['GET', `${ENDPOINTS}/${bEndpoint}`],
        ['GET', `${ENDPOINTS}/${bEndpoint}/delete`],
        ['POST', `${ENDPOINTS}/${bEndpoint}`, { url: 'https://127.0.0.1:9/hijack' }],
        ['POST', `${ENDPOINTS}/${bEndpoint}/enable`],
        ['POST', `${ENDPOINTS}/${bEndpoint}/disable`],
        ['POST', `${ENDPOINTS}/${bEndpoint}/delete`],
        ['POST', `${ENDPOINTS}/${bEndpoint}/secret`],
        ['POST', `${ENDPOINTS}/${bEndpoint}/rotate-secret`],
        ['POST', `/settings/profile/webhook-deliveries/${bDelivery.id}/redeliver`],
        ['POST', `${ENDPOINTS}/${bEndpoint}/recover`, { since: '2000-01-01T00:00' }],
        ['GET', `${ENDPOINTS}/not-a-uuid`],
        ['GET', `${ENDPOINTS}/${bEndpoint.toUpperCase()}`],
      ];
      for (const [method, path, fields] of attempts) {
        const res =
          method === 'GET' ? await a.session.get(path) : await a.session.post(path, { _csrf: a.csrf, ...fields });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(res.body).not.toContain('whsec_');
        expect(res.body).not.toContain('tenant-b');
      }
      // Form fields naming another account are ignored: the account is the session's.
      await a.session.post(ENDPOINTS, { _csrf: a.csrf, url: 'https://127.0.0.1:9/mine', account_id: b.user.accountId });
      await a.session.post('/settings/profile/webhook-notifications', {
        _csrf: a.csrf,
        notifications_enabled: 'false',
        account_id: b.user.accountId,
      });
      expect((await b.api('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: true });
      expect((await b.api('GET', `${V1}/webhook-endpoints`)).body.data).toHaveLength(1);
      expect((await a.api('GET', `${V1}/webhook-endpoints`)).body.data).toHaveLength(1);

      expect((await b.api('GET', `${V1}/webhook-endpoints/${bEndpoint}`)).body).toEqual(bBefore);
      expect((await b.api('GET', `${V1}/webhook-deliveries/${bDelivery.id}`)).body.status).toBe('failed');
    });
  });
});

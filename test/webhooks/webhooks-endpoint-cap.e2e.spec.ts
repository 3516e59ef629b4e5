/**
 * The cap on an account's webhook endpoints (docs/webhooks.md, "Endpoints per account"): the
 * create past it is a 409 problem+json naming the limit, in the API and on the settings screen;
 * WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT moves it; deleted endpoints free their place; concurrent
 * creates on one instance never go past it.
 */
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { HttpSession, provisionUser } from '../support/settings-screen';
import { apiClient, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';
const create = (api: Api, i: number) => api('POST', `${V1}/webhook-endpoints`, { url: `https://127.0.0.1:9/cap-${i}` });

describe('webhook endpoints per account', () => {
  describe('by default', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startService({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('accepts 16 and answers the 17th with a 409 problem naming the limit; a delete makes room', async () => {
      const api = apiClient(service.url, (await provisionAccount(service)).token);
      const ids: string[] = [];
      for (let i = 0; i < 16; i++) {
        const res = await create(api, i);
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const refused = await create(api, 16);
      expect(refused.status).toBe(409);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({
        status: 409,
        detail: expect.stringMatching(/most webhook endpoints allowed: 16 \(WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT\)/),
      });
      expect((await api('GET', `${V1}/webhook-endpoints?limit=100`)).body.data).toHaveLength(16);
      // Disabled endpoints count; deleted ones do not.
      expect((await api('POST', `${V1}/webhook-endpoints/${ids[0]}/disable`)).status).toBe(200);
      expect((await create(api, 17)).status).toBe(409);
      expect((await api('DELETE', `${V1}/webhook-endpoints/${ids[0]}`)).status).toBe(204);
      expect((await create(api, 18)).status).toBe(201);
      // Another account has its own 16.
      const other = apiClient(service.url, (await provisionAccount(service)).token);
      expect((await create(other, 0)).status).toBe(201);
    });

    it('lets exactly 16 of 24 concurrent creates through', async () => {
      const api = apiClient(service.url, (await provisionAccount(service)).token);
      const statuses = (await Promise.all(Array.from({ length: 24 }, (_, i) => create(api, i)))).map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(16);
      expect(statuses.filter((s) => s === 409)).toHaveLength(8);
      expect((await api('GET', `${V1}/webhook-endpoints?limit=100`)).body.data).toHaveLength(16);
    });
  });

  describe('with WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT=2', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startService({
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: '2' },
      });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('refuses the third in the API and in the settings form, which says why', async () => {
      const account = await provisionAccount(service);
      const api = apiClient(service.url, account.token);
      expect((await create(api, 0)).status).toBe(201);
      expect((await create(api, 1)).status).toBe(201);
      const refused = await create(api, 2);
      expect([refused.status, refused.body.detail]).toEqual([409, expect.stringMatching(/allowed: 2 /)]);

      const user = await provisionUser(service, account.accountId);
      const session = new HttpSession(service.url);
      expect((await session.signIn(user.email, user.password)).status).toBe(303);
      const form = await session.post('/settings/profile/webhook-endpoints', {
        _csrf: await session.csrf(),
        url: 'https://127.0.0.1:9/cap-form',
      });
      expect(form.status).toBe(409);
      expect(form.body).toMatch(/There is a problem — nothing was saved/);
      expect(form.body).toMatch(/most webhook endpoints allowed: 2 \(WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT\)/);
      // The form keeps what was typed.
      expect(form.body).toContain('value="https://127.0.0.1:9/cap-form"');
      expect((await api('GET', `${V1}/webhook-endpoints`)).body.data).toHaveLength(2);
    });
  });
});

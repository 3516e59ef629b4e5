/**
 * The address guard at endpoint creation, with private networks not allowed (the default). In its
 * own file: one service per Jest module registry (auth's passport strategy is process-wide).
 */
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { apiClient, type Api } from '../support/webhooks';

describe('webhook address guard at creation', () => {
  let strict: TestService;
  let s: Api;
  beforeAll(async () => {
    strict = await startService({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    s = apiClient(strict.url, (await provisionAccount(strict)).token);
  });
  afterAll(async () => {
    await strict?.destroy();
  });

  it.each([
    'https://127.0.0.1/hook',
    'https://[::1]/hook',
    'https://10.0.0.1/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://2130706433/',
    'https://localhost/hook',
  ])('refuses %s with a 400 on url', async (url) => {
    const res = await s('POST', '/external-api/v1/webhook-endpoints', { url });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/public address/) }]);
  });
});

/**
 * The settings screen in a real browser: Debian's headless Chromium driven by playwright-core.
 * One user journey, as the issue spells it: sign in, switch notifications on, create an endpoint
 * (the http: error first), enable it, trigger an event through the API and see its delivery,
 * disable the endpoint, sign out. Screenshots go to test-artifacts/settings-screen/ (git-ignored).
 * Waits are for page states, never for a time; the Jest timeout bounds them.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { provisionUser, type TestUser } from '../support/settings-screen';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, type Api } from '../support/webhooks';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts', 'settings-screen');
const V1 = '/external-api/v1';

jest.setTimeout(60_000);

describe('settings screen in headless Chromium', () => {
  let service: TestService;
  let pki: TestPki | undefined;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let user: TestUser;
  let api: Api;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: apt-get install -y chromium (Jest's global set-up, test/support/system-tools.js, does as root)`,
      );
    mkdirSync(ARTIFACTS, { recursive: true });
    pki = makeTestPki('Browser');
    receiver = await startReceiver(pki);
    service = await startService({
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '5ms,10ms' },
    });
    const account = await provisionAccount(service);
    api = apiClient(service.url, account.token);
    user = await provisionUser(service, account.accountId);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.destroy();
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  it('signs in, switches notifications on, creates and enables an endpoint, shows its delivery, disables it, signs out', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();

    // Sign in with the keyboard: the skip link comes first, then the form's fields in order.
    await page.goto(`${service.url}/settings`);
    expect(new URL(page.url()).pathname).toBe('/settings/sign-in');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to main content');
    await page.getByLabel('Email').focus();
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.password);
    await shot(page, '01-sign-in');
    await Promise.all([page.waitForURL('**/settings/profile'), page.keyboard.press('Enter')]);

    // User menu → Profile Settings → Profile tab → Webhook Settings.
    await page.getByRole('navigation', { name: 'User menu' }).locator('summary').click();
    await Promise.all([page.waitForLoadState(), page.getByRole('link', { name: 'Profile Settings' }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Profile Settings');
    expect(
      await page
        .getByRole('navigation', { name: 'Profile Settings' })
        .getByRole('link', { name: 'Profile' })
        .getAttribute('aria-current'),
    ).toBe('page');
    const settings = page.getByRole('region', { name: 'Webhook Settings' });
    await settings.waitFor();
    await shot(page, '02-profile');

    // Webhook Notifications: off for a new account; one press switches it on.
    const toggle = settings.getByRole('switch', { name: 'Webhook Notifications' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await Promise.all([page.waitForLoadState(), toggle.click()]);
    await page.getByRole('status').filter({ hasText: 'Webhook Notifications are on.' }).waitFor();
    expect(await settings.getByRole('switch', { name: 'Webhook Notifications' }).getAttribute('aria-checked')).toBe(
      'true',
    );
    expect((await api('GET', `${V1}/webhook-settings`)).body).toEqual({ notifications_enabled: true });

    // Create Endpoint with an http: URL: the error shows next to the field; nothing is saved.
    const groups = settings.getByRole('group', { name: 'Event Types' });
    for (const category of ['Entities', 'Documents', 'Jurisdictions', 'Tasks', 'Orders']) {
      await groups.getByRole('group', { name: category }).waitFor();
    }
    const httpUrl = receiver.url.replace('https:', 'http:');
    await page.getByLabel('Endpoint URL').fill(httpUrl);
    await page.getByLabel('Description').fill('Browser test receiver');
    await page.getByLabel('New Entity').check();
    await page.getByLabel('Order Submitted').check();
    await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: 'Create Endpoint' }).click()]);
    const urlField = page.getByLabel('Endpoint URL');
    expect(await urlField.getAttribute('aria-invalid')).toBe('true');
    const fieldError = page.locator('#url-error');
    expect(await fieldError.textContent()).toMatch(/HTTPS/i);
    // "Next to the field": the message sits right under the input, and the input names it.
    expect(await urlField.getAttribute('aria-describedby')).toContain('url-error');
    const [inputBox, errorBox] = [await urlField.boundingBox(), await fieldError.boundingBox()];
    expect(errorBox!.y).toBeGreaterThanOrEqual(inputBox!.y + inputBox!.height);
    expect(errorBox!.y - (inputBox!.y + inputBox!.height)).toBeLessThan(40);
    expect(await page.getByLabel('New Entity').isChecked()).toBe(true);
    expect((await api('GET', `${V1}/webhook-endpoints`)).body.data).toEqual([]);
    await shot(page, '03-http-error');

    // The https URL is accepted; the new endpoint shows as disabled.
    await urlField.fill(receiver.url);
    await Promise.all([
      page.waitForURL('**/settings/profile#endpoint-*'),
      page.getByRole('button', { name: 'Create Endpoint' }).click(),
    ]);
    const [endpoint] = (await api('GET', `${V1}/webhook-endpoints`)).body.data;
    expect(endpoint).toMatchObject({
      url: receiver.url,
      enabled: false,
      event_types: ['entity.created', 'order.submitted'],
    });
    const item = page.locator(`#endpoint-${endpoint.id}`);
    expect(await item.locator('.badge').textContent()).toBe('Disabled');
    expect(await item.textContent()).toContain('Browser test receiver');
    expect(await item.textContent()).toContain('New Entity');
    expect(await item.textContent()).toContain('Order Submitted');

    // Enable it.
    await Promise.all([page.waitForLoadState(), item.getByRole('button', { name: /^Enable/ }).click()]);
    await page.getByRole('status').filter({ hasText: 'is enabled.' }).waitFor();
    expect(await page.locator(`#endpoint-${endpoint.id} .badge`).textContent()).toBe('Enabled');
    await shot(page, '04-enabled');

    // An event through the API (bearer token, not the browser) reaches the receiver...
    expect((await api('POST', `${V1}/entities`, { name: 'Browser Test LLC', entity_type: 'llc' })).status).toBe(201);
    const [received] = await receiver.waitFor(1);
    expect(received.json.event_type).toBe('entity.created');

    // ...and its delivery appears on the endpoint's page (reloaded until it shows as delivered).
    await Promise.all([
      page.waitForLoadState(),
      page
        .locator(`#endpoint-${endpoint.id}`)
        .getByRole('link', { name: /^Signing secret & deliveries/ })
        .click(),
    ]);
    const deliveries = page.getByRole('region', { name: 'Recent deliveries' });
    for (;;) {
      if ((await deliveries.locator('.badge.delivered').count()) > 0) break;
      await page.reload();
    }
    const row = deliveries.locator('tbody tr').first();
    expect(await row.locator('td[data-label="Event"]').textContent()).toContain('New Entity');
    expect(await row.locator('td[data-label="Attempts"]').textContent()).toBe('1');
    await shot(page, '05-delivery');

    // Reveal the signing secret: the one the API holds.
    await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: 'Reveal secret' }).click()]);
    expect(await page.locator('#secret-value').textContent()).toBe(
      (await api('GET', `${V1}/webhook-endpoints/${endpoint.id}/secret`)).body.secret,
    );

    // Disable it.
    await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: /^Disable/ }).click()]);
    await page.getByRole('status').filter({ hasText: 'is disabled.' }).waitFor();
    expect((await api('GET', `${V1}/webhook-endpoints/${endpoint.id}`)).body.enabled).toBe(false);
    expect(await page.locator('.endpoint-head .badge').first().textContent()).toBe('Disabled');

    // Narrow window: nothing wider than the viewport.
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${service.url}/settings/profile`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await shot(page, '06-narrow-profile');
    await page.goto(`${service.url}/settings/profile/webhook-endpoints/${endpoint.id}`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await shot(page, '07-narrow-endpoint');

    // The session cookie is out of reach of scripts; sign out through the user menu.
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'filing_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/settings' });
    expect(await page.evaluate('document.cookie')).toBe('');
    await page.getByRole('navigation', { name: 'User menu' }).locator('summary').click();
    await Promise.all([
      page.waitForURL('**/settings/sign-in?signed_out=1'),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    await page.getByRole('status').filter({ hasText: 'You are signed out.' }).waitFor();
    await shot(page, '08-signed-out');
    await page.goto(`${service.url}/settings/profile`);
    expect(new URL(page.url()).pathname).toBe('/settings/sign-in');
    await context.close();
  });
});

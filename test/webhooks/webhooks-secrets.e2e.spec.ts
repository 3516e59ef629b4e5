/**
 * Signing secrets live in the event store, sealed (AES-256-GCM) under SECRETS_KEY or the
 * DATA_DIR key file, in a key stream per endpoint (`webhookendpointkey-<id>`): an older
 * version's secrets (in `webhook-secrets.db`, events with only a fingerprint) are imported at
 * start; a rotation of SECRETS_KEY re-seals them under the new key and truncates the old versions.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, toEventData } from '@filing/platform';
import { verifySignature } from '@filing/webhooks';
import Database from 'better-sqlite3';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';
const key = () => randomBytes(32).toString('base64');

describe('webhook signing secrets in the event store', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  const services: TestService[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
    env = { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  });
  afterAll(async () => {
    // Each test destroys (and audits) its last service; this only cleans up after a failure.
    for (const s of services) await s.destroy({ audit: false });
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });
  const start = async (options: Parameters<typeof startService>[0]) => {
    const service = await startService(options);
    services.push(service);
    return service;
  };

  it("imports an older version's webhook-secrets.db at start: the secret is read back and signs, the plaintext file is deleted", async () => {
    const first = await start({ env });
    const acc = await provisionAccount(first);
    const api = apiClient(first.url, acc.token);
    // As an older version wrote it: the event names the secret by fingerprint only, the file holds it.
    const endpointId = uuidv7();
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const fingerprint = createHash('sha256').update(secret).digest('hex').slice(0, 16);
    const context = {
      account_id: acc.accountId,
      actor: `client:${acc.clientId}`,
      correlation_id: randomUUID(),
      causation_id: null,
    };
    const store = first.app.get<EventStore>(EVENT_STORE);
    await store.appendToStream(`webhookendpoint-${endpointId}`, [
      toEventData(
        {
          type: 'webhooks.EndpointCreated',
          data: {
            endpoint_id: endpointId,
            url: receiver.url,
            description: null,
            event_types: ['entity.created'],
            secret_generation: 1,
            secret_fingerprint: fingerprint,
          },
        },
        buildMetadata(context),
      ),
      toEventData({ type: 'webhooks.EndpointEnabled', data: { endpoint_id: endpointId } }, buildMetadata(context)),
    ]);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    await first.close();
    const file = join(first.dataDir, 'webhook-secrets.db');
    // The file, and the copy an earlier version of the import set aside as `.imported` (plaintext too).
    for (const path of [file, `${file}.imported`]) {
      const legacy = new Database(path);
      legacy.exec(`CREATE TABLE webhook_signing_secrets (endpoint_id TEXT NOT NULL, fingerprint TEXT NOT NULL, secret TEXT NOT NULL,
        created_at TEXT NOT NULL, PRIMARY KEY (endpoint_id, fingerprint))`);
      legacy
        .prepare('INSERT INTO webhook_signing_secrets VALUES (?, ?, ?, ?)')
        .run(endpointId, fingerprint, secret, new Date().toISOString());
      legacy.close();
    }

    const upgraded = await start({ env, reuse: { dataDir: first.dataDir } });
    const after = apiClient(upgraded.url, acc.token);
    expect((await after('GET', `${V1}/webhook-endpoints/${endpointId}/secret`)).body).toEqual({ secret });
    // Sealed in the store, the plaintext is gone from DATA_DIR: no file there holds the secret.
    expect([existsSync(file), existsSync(`${file}.imported`)]).toEqual([false, false]);
    for (const name of readdirSync(upgraded.dataDir)) {
      const path = join(upgraded.dataDir, name);
      if (statSync(path).isFile()) expect([name, readFileSync(path).includes(secret)]).toEqual([name, false]);
    }
    const sealed = (await upgraded.app.get<EventStore>(EVENT_STORE).readStream(`webhookendpointkey-${endpointId}`)).at(
      -1,
    )!;
    expect([sealed.type, sealed.data.secret_fingerprint]).toEqual(['webhooks.EndpointSecretStored', fingerprint]);
    expect(JSON.stringify(sealed.data)).not.toContain(secret.slice('whsec_'.length));

    const entity = (await after('POST', `${V1}/entities`, { name: 'Imported', entity_type: 'llc' })).body;
    const [req] = await receiver.waitFor(1, (r) => r.json.entity_id === entity.id);
    const h = req.headers;
    expect(
      verifySignature(
        secret,
        String(h['webhook-signature']),
        String(h['webhook-id']),
        Number(h['webhook-timestamp']),
        req.body,
      ),
    ).toBe(true);

    // A second start finds nothing to import and writes nothing more.
    const streams = [`webhookendpoint-${endpointId}`, `webhookendpointkey-${endpointId}`];
    const counts = async (service: TestService) =>
      Promise.all(streams.map(async (s) => (await service.app.get<EventStore>(EVENT_STORE).readStream(s)).length));
    const count = await counts(upgraded);
    await upgraded.close();
    const again = await start({ env, reuse: { dataDir: first.dataDir } });
    expect(await counts(again)).toEqual(count);
    await again.destroy();
  });

  it('a SECRETS_KEY rotation: the previous key still opens, the secrets are re-sealed, then the previous key can go', async () => {
    const [oldKey, newKey] = [key(), key()];
    const first = await start({ env: { ...env, SECRETS_KEY: oldKey } });
    const acc = await provisionAccount(first);
    const created = (await apiClient(first.url, acc.token)('POST', `${V1}/webhook-endpoints`, { url: receiver.url }))
      .body;
    const stream = `webhookendpointkey-${created.id}`;
    const lastSealed = async (service: TestService) =>
      (await service.app.get<EventStore>(EVENT_STORE).readStream(stream)).at(-1)!.data.secret_sealed as string;
    const sealedFirst = await lastSealed(first);
    await first.close();

    // Without the key it was sealed under, this instance cannot open it: said, never shown.
    const lost = await start({ env: { ...env, SECRETS_KEY: newKey }, reuse: { dataDir: first.dataDir } });
    const refused = await apiClient(lost.url, acc.token)('GET', `${V1}/webhook-endpoints/${created.id}/secret`);
    expect(refused.status).toBe(500);
    expect(JSON.stringify(refused.body)).not.toContain(created.secret);
    await lost.close();

    const rotating = await start({
      env: { ...env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey },
      reuse: { dataDir: first.dataDir },
    });
    expect(
      (await apiClient(rotating.url, acc.token)('GET', `${V1}/webhook-endpoints/${created.id}/secret`)).body,
    ).toEqual({ secret: created.secret });
    // The re-seal runs in the background once the read models have caught up.
    const resealed = await eventually(async () => {
      const last = await lastSealed(rotating);
      return last !== sealedFirst ? last : undefined;
    });
    expect(resealed.split('.')[1]).not.toBe(sealedFirst.split('.')[1]);
    // The version under the old key is truncated away (just after the new one is appended): the key
    // stream comes to show only the new one.
    await eventually(async () =>
      (await rotating.app.get<EventStore>(EVENT_STORE).readStream(stream)).length === 1 ? true : undefined,
    );
    await rotating.close();

    const rotated = await start({ env: { ...env, SECRETS_KEY: newKey }, reuse: { dataDir: first.dataDir } });
    expect(
      (await apiClient(rotated.url, acc.token)('GET', `${V1}/webhook-endpoints/${created.id}/secret`)).body,
    ).toEqual({ secret: created.secret });
    await rotated.destroy();
  });
});

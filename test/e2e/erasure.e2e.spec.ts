/**
 * Erasure by design (issue 51), on both stores: after DELETE, nothing in the store (events.db with
 * its WAL checkpointed, everything the EventStoreDB test server keeps after a scavenge) or in an
 * `events:export` holds the document's bytes or a key that opens them; after a SECRETS_KEY
 * rotation and `secrets:reseal`, the retired key opens nothing (no document key, no webhook
 * signing secret); content round-trips; a data dir
 * of the version before encryption keeps serving after `documents:encrypt`, its deleted
 * document's bytes gone; `accounts:erase` destroys an account's keys and records it.
 */
import { EVENT_STORE, type EventStore, SqliteEventStore } from '@filing/event-store';
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { SecretBox, secretKeyId } from '@filing/platform';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEsdbTestServer } from '../esdb-test-server/harness';
import { resourceApi } from '../support/api';
import { bearer, provisionAccount, provisionClient, type ProvisionedClient } from '../support/auth';
import { runCli } from '../support/cli';
import {
  cli,
  cliEnv,
  dataBytes,
  found,
  importExport,
  sealedSecretsIn,
  spellings,
  storedBytes,
} from '../support/erasure';
import { startService, type TestService } from '../support/service';
import { eventually } from '../support/webhooks';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const FIXTURE = join(__dirname, '../fixtures');

describe.each(['sqlite', 'esdb'] as const)('erasure on the %s store', (eventStore) => {
  let service: TestService;
  const api = resourceApi(() => service);
  afterEach(async () => service?.destroy());

  /** Content whose every chunk carries `marker` (so any plaintext copy is found). */
  const personal = (marker: string, size = 200 * 1024) => Buffer.alloc(size, `${marker}|`);

  async function addDocument(client: ProvisionedClient, content: Buffer): Promise<string> {
    const entity = await api.create(client, '/entities', { name: 'Erasable LLC', entity_type: 'llc' });
    const document = await api.create(client, '/documents', {
      entity_id: entity.id,
      title: 'Passport',
      document_type: 'identification',
      content_type: 'application/octet-stream',
      content_base64: content.toString('base64'),
    });
    return document.id;
  }

  async function download(client: ProvisionedClient, id: string): Promise<{ status: number; bytes: Buffer }> {
    const res = await fetch(`${service.url}/external-api/v1/documents/${id}/content`, {
      headers: bearer(client.token),
    });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  /** The document's data key and its sealed form, read as only the service (holding SECRETS_KEY) can. */
  async function keyOf(id: string): Promise<{ key: Buffer; sealed: string }> {
    const store = service.app.get<EventStore>(EVENT_STORE);
    const [event] = await store.readStream(`documentkey-${id}`);
    const sealed = event.data.key_sealed as string;
    return { sealed, key: Buffer.from(service.app.get(SecretBox).open(sealed, `documentkey-${id}`), 'base64') };
  }

  const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  const restart = async (env: NodeJS.ProcessEnv = {}) => {
    service = await startService({
      eventStore,
      reuse: { dataDir: service.dataDir, esdb: service.esdb },
      env: { ...WEBHOOKS, ...env },
    });
  };
  /** A webhook endpoint of the client's account, with its signing secret. */
  const addEndpoint = async (client: ProvisionedClient) => {
    const res = await api.call(client, 'POST', '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };

  it('DELETE leaves neither the bytes nor a key that opens them in the store or an export; history, replay and audit stay clean', async () => {
    service = await startService({ eventStore });
    const client = await provisionAccount(service);
    const [kept, gone] = [personal(`KEPT-${randomUUID()}`), personal(`GONE-${randomUUID()}`)];
    const [keptId, goneId] = [await addDocument(client, kept), await addDocument(client, gone)];
    const { key, sealed } = await keyOf(goneId);
    expect((await api.call(client, 'DELETE', `/documents/${goneId}`)).status).toBe(204);
    expect((await download(client, goneId)).status).toBe(404);
    const history = await service.app.get<EventStore>(EVENT_STORE).readStream(`document-${goneId}`);
    expect(history.map((e) => [e.type, e.data.sha256])).toEqual([
      ['documents.DocumentAdded', sha256(gone)],
      ['documents.DocumentDeleted', sha256(gone)],
    ]);
    await service.close();

    const needles: Array<[string, Buffer]> = [
      ['plaintext', gone.subarray(0, 64)],
      ['plaintext (base64)', Buffer.from(gone.subarray(0, 96).toString('base64'))],
      ['kept plaintext', kept.subarray(0, 64)],
      ...spellings('data key', key),
      ['sealed data key', Buffer.from(sealed)],
    ];
    const exported = Buffer.from((await cli(service, ['events:export'])).stdout);
    expect(found(exported, needles)).toEqual([]);
    expect(exported.includes(`"document-${goneId}"`)).toBe(true);
    expect(found(await storedBytes(service), needles)).toEqual([]);
    // The search finds what is there: the kept document's sealed key.
    await restart();
    expect(
      found(await storedBytes(await closed()), [['kept key', Buffer.from((await keyOfClosed(keptId)).sealed)]]),
    ).toEqual(['kept key']);

    for (const command of ['replay', 'audit']) await cli(service, [command]);
    await restart();
    const back = await download(client, keptId);
    expect([back.status, sha256(back.bytes)]).toEqual([200, sha256(kept)]);
    expect((await download(client, goneId)).status).toBe(404);
  }, 120_000);

  /** Closes the running service, returning it (its data stays). */
  async function closed(): Promise<TestService> {
    await service.close();
    return service;
  }
  /** The sealed key as the log holds it, read with a fresh store client. */
  async function keyOfClosed(id: string): Promise<{ sealed: string }> {
    const store: EventStore = service.esdb
      ? new EsdbEventStore(service.esdb.connectionString)
      : new SqliteEventStore({ file: join(service.dataDir, 'events.db') });
    try {
      const [event] = await store.readStream(`documentkey-${id}`);
      return { sealed: event.data.key_sealed as string };
    } finally {
      await store.close();
    }
  }

  it('round-trips content byte for byte at 1 B and around the 192 KiB chunk boundary', async () => {
    service = await startService({ eventStore });
    const client = await provisionAccount(service);
    for (const size of [1, 192 * 1024, 192 * 1024 + 1]) {
      const content = randomBytes(size);
      const res = await download(client, await addDocument(client, content));
      expect([res.status, res.bytes.length, sha256(res.bytes)]).toEqual([200, size, sha256(content)]);
    }
  }, 60_000);

  it('after a SECRETS_KEY rotation and secrets:reseal, the retired key opens nothing in a copy of the data', async () => {
    const [retired, current] = [randomBytes(32), randomBytes(32)];
    service = await startService({ eventStore, env: { ...WEBHOOKS, SECRETS_KEY: retired.toString('base64') } });
    const client = await provisionAccount(service);
    const contents = [personal('ROTATED-A', 10), personal('ROTATED-B', 300 * 1024)];
    const ids = [await addDocument(client, contents[0]), await addDocument(client, contents[1])];
    const endpoint = await addEndpoint(client);
    await service.close();

    const rotated = { SECRETS_KEY: current.toString('base64'), SECRETS_KEY_PREVIOUS: retired.toString('base64') };
    await restart(rotated);
    const env = { ...cliEnv(service, rotated.SECRETS_KEY), ...rotated };
    const first = await cli(service, ['secrets:reseal'], env);
    const report = JSON.parse(first.stdout) as Record<string, Record<string, number>>;
    expect([report.key_id, report.document_keys]).toEqual([
      secretKeyId(current),
      { resealed: 2, current: 0, destroyed: 0 },
    ]);
    // The service re-seals the webhook secrets at its start too: whichever came first did it.
    expect(report.webhook_secrets.resealed + report.webhook_secrets.current).toBe(1);
    expect(first.stderr).toContain('document keys: 2/2');
    const again = JSON.parse((await cli(service, ['secrets:reseal'], env)).stdout) as typeof report;
    expect([again.document_keys, again.webhook_secrets]).toEqual([
      { resealed: 0, current: 2, destroyed: 0 },
      { resealed: 0, current: 1, destroyed: 0 },
    ]);
    // Read models included (the endpoints' hold the sealed secrets), as a backup would copy them.
    const copy = await dataBytes(await closed());

    const sealed = sealedSecretsIn(copy);
    expect(sealed.filter((s) => s.startsWith(`v1.${secretKeyId(current)}.`)).length).toBeGreaterThanOrEqual(3);
    expect(sealed.filter((s) => s.startsWith(`v1.${secretKeyId(retired)}.`))).toEqual([]);
    const withRetiredOnly = new SecretBox(retired);
    const contexts = [...ids.map((id) => `documentkey-${id}`), `webhook-endpoint:${endpoint.id}`];
    const opened = sealed.flatMap((s) =>
      contexts.flatMap((context) => {
        try {
          return [withRetiredOnly.open(s, context)];
        } catch {
          return [];
        }
      }),
    );
    expect(opened).toEqual([]);
    expect(found(copy, [['webhook secret', Buffer.from(endpoint.secret)]])).toEqual([]);
    // The new key alone serves everything.
    await restart({ SECRETS_KEY: current.toString('base64') });
    for (const [i, id] of ids.entries()) expect(sha256((await download(client, id)).bytes)).toBe(sha256(contents[i]));
    expect((await api.call(client, 'GET', `/webhook-endpoints/${endpoint.id}/secret`)).body).toEqual({
      secret: endpoint.secret,
    });
  }, 120_000);

  it('a data dir of the version before encryption keeps serving after documents:encrypt; its deleted bytes are gone', async () => {
    const fixture = JSON.parse(readFileSync(join(FIXTURE, 'pre-encryption.json'), 'utf8')) as Record<string, string>;
    const ndjson = readFileSync(join(FIXTURE, 'pre-encryption.events.ndjson'), 'utf8');
    if (eventStore === 'sqlite') {
      const dataDir = mkdtempSync(join(tmpdir(), 'erasure-fixture-'));
      const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
      await importExport(store, ndjson);
      await store.close();
      service = await startService({ reuse: { dataDir } });
    } else {
      const esdb = await startEsdbTestServer();
      const store = new EsdbEventStore(esdb.connectionString);
      await importExport(store, ndjson);
      await store.close();
      service = await startService({ eventStore, reuse: { esdb } });
    }
    const client = await provisionClient(service, fixture.account_id);
    const legacyText = (which: string) => Buffer.from(`LEGACY-${which}-PLAINTEXT`);
    const before = await download(client, fixture.live);
    expect(before.bytes.toString()).toContain(legacyText('LIVE').toString());
    expect((await download(client, fixture.deleted)).status).toBe(404);

    expect(JSON.parse((await cli(service, ['documents:encrypt'])).stdout)).toEqual({ encrypted: 1, erased: 1 });
    const after = await download(client, fixture.live);
    expect([after.status, after.bytes.equals(before.bytes)]).toEqual([200, true]);
    expect((await download(client, fixture.deleted)).status).toBe(404);
    const needles: Array<[string, Buffer]> = ['LIVE', 'DELETED'].flatMap((which): Array<[string, Buffer]> => [
      [which, legacyText(which)],
      [`${which} (base64)`, Buffer.from(legacyText(which).subarray(0, 21).toString('base64'))],
    ]);
    expect(found(await storedBytes(await closed()), needles)).toEqual([]);
    await restart();
    expect((await download(client, fixture.live)).bytes.equals(before.bytes)).toBe(true);
  }, 120_000);

  it("accounts:erase needs the id confirmed, destroys every key of the account's documents and records it", async () => {
    service = await startService({ eventStore, env: WEBHOOKS });
    const [erased, other] = [await provisionAccount(service), await provisionAccount(service)];
    const [liveId, deletedId, othersId] = [
      await addDocument(erased, personal('ERASED-LIVE')),
      await addDocument(erased, personal('ERASED-DELETED')),
      await addDocument(other, personal('OTHER')),
    ];
    const keys = [await keyOf(liveId), await keyOf(deletedId)];
    const endpoint = await addEndpoint(erased);
    const [endpointKey] = await service.app
      .get<EventStore>(EVENT_STORE)
      .readStream(`webhookendpointkey-${endpoint.id}`);
    expect((await api.call(erased, 'DELETE', `/documents/${deletedId}`)).status).toBe(204);

    const refused = await runCli(service.dataDir, ['accounts:erase', erased.accountId], 60_000, '', cliEnv(service));
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining(`--confirm ${erased.accountId}`)]);
    const res = await cli(service, ['accounts:erase', erased.accountId, '--confirm', erased.accountId]);
    expect(JSON.parse(res.stdout)).toEqual({
      account_id: erased.accountId,
      documents_erased: 2,
      webhook_endpoints_erased: 1,
    });

    await eventually(async () => ((await download(erased, liveId)).status === 404 ? true : undefined));
    await eventually(async () =>
      (await api.call(erased, 'GET', `/webhook-endpoints/${endpoint.id}/secret`)).status === 404 ? true : undefined,
    );
    expect((await download(other, othersId)).status).toBe(200);
    const store = service.app.get<EventStore>(EVENT_STORE);
    const [record] = await store.readStream(`erasure-${erased.accountId}`);
    expect([record.type, record.data]).toEqual([
      'erasure.AccountErased',
      { account_id: erased.accountId, document_ids: [liveId, deletedId], webhook_endpoint_ids: [endpoint.id] },
    ]);
    expect((await store.readStream(`document-${liveId}`)).map((e) => e.type)).toEqual([
      'documents.DocumentAdded',
      'documents.DocumentDeleted',
    ]);
    const needles = keys.flatMap(({ key, sealed }, i): Array<[string, Buffer]> => [
      ...spellings(`key ${i}`, key),
      [`sealed ${i}`, Buffer.from(sealed)],
    ]);
    needles.push(['webhook secret', Buffer.from(endpoint.secret)]);
    needles.push(['sealed webhook secret', Buffer.from(endpointKey.data.secret_sealed as string)]);
    expect(found(await storedBytes(await closed()), needles)).toEqual([]);
    await restart();
  }, 120_000);
});

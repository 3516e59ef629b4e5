/**
 * CONTRACT.md §5: "at the event's position in the stream, the account switch was on, the endpoint
 * was enabled, and its event-type selection was empty or included the event. Replaying the stream
 * gives the same decision." The switch, the endpoints and their selections change between writes;
 * the deliveries scheduled must follow each change exactly, and a new store holding only the
 * domain events (no delivery events at all) must schedule exactly the same deliveries again.
 */
import { EVENT_STORE, SqliteEventStore, type EventStore, type RecordedEvent } from '@filing/event-store';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, fanOutCaughtUp, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

/** `event id → endpoint id` pairs the fan-out scheduled, as sorted strings. */
async function scheduled(store: EventStore): Promise<string[]> {
  const all = await store.readAll({ maxCount: 1_000_000 });
  return all
    .filter((e) => e.type === 'webhooks.DeliveryScheduled')
    .map((e) => e.data as { event_id: string; endpoint_id: string })
    .map((d) => `${d.event_id}→${d.endpoint_id}`)
    .sort();
}

describe('webhook fan-out: the decision at the event’s position, and the same on replay', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let first: TestService;
  let replayed: TestService | undefined;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
  });
  afterAll(async () => {
    await first?.destroy();
    await replayed?.destroy();
    await receiver?.close();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it('schedules exactly the deliveries the switch, enablement and selections allowed at each event, and the same set again from the domain events alone', async () => {
    const env = { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '100ms' };
    first = await startService({ env });
    const api: Api = apiClient(first.url, (await provisionAccount(first)).token);
    const endpoint = async (eventTypes?: string[]) => {
      const res = await api('POST', `${V1}/webhook-endpoints`, {
        url: receiver.url,
        ...(eventTypes ? { event_types: eventTypes } : {}),
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await api(method, `${V1}${path}`, body);
      expect(res.status).toBeLessThan(300);
      return res.body;
    };
    const eventOf = async (stream: string, revision: number) =>
      (await first.app.get<EventStore>(EVENT_STORE).readStream(stream))[revision].id;

    const all = await endpoint();
    const updatesOnly = await endpoint(['entity.updated']);
    const later = await endpoint();
    await ok('POST', `/webhook-endpoints/${all}/enable`);
    await ok('POST', `/webhook-endpoints/${updatesOnly}/enable`);

    // Switch off (a new account's default): nothing for A.
    const a = await ok('POST', '/entities', { name: 'A', entity_type: 'llc' });
    await ok('PUT', '/webhook-settings', { notifications_enabled: true });
    // B created: `all`. B updated: `all` and `updatesOnly`. `later` is still disabled.
    const b = await ok('POST', '/entities', { name: 'B', entity_type: 'llc' });
    await ok('PATCH', `/entities/${b.id}`, { name: 'B2' });
    await ok('POST', `/webhook-endpoints/${later}/enable`);
    await ok('POST', `/webhook-endpoints/${all}/disable`);
    // C created: `later` only (`all` disabled, `updatesOnly` not subscribed).
    const c = await ok('POST', '/entities', { name: 'C', entity_type: 'llc' });
    await ok('PATCH', `/webhook-endpoints/${updatesOnly}`, { event_types: [] });
    // A updated: `updatesOnly` (now every type) and `later`.
    await ok('PATCH', `/entities/${a.id}`, { name: 'A2' });
    await ok('DELETE', `/webhook-endpoints/${later}`);
    // C updated: `updatesOnly` only (`later` deleted).
    await ok('PATCH', `/entities/${c.id}`, { name: 'C2' });
    await ok('PUT', '/webhook-settings', { notifications_enabled: false });
    // B updated again with the switch off: nothing.
    await ok('PATCH', `/entities/${b.id}`, { name: 'B3' });

    const expected = [
      [await eventOf(`entity-${b.id}`, 0), all],
      [await eventOf(`entity-${b.id}`, 1), all],
      [await eventOf(`entity-${b.id}`, 1), updatesOnly],
      [await eventOf(`entity-${c.id}`, 0), later],
      [await eventOf(`entity-${a.id}`, 1), updatesOnly],
      [await eventOf(`entity-${a.id}`, 1), later],
      [await eventOf(`entity-${c.id}`, 1), updatesOnly],
    ]
      .map(([event, ep]) => `${event}→${ep}`)
      .sort();

    await fanOutCaughtUp(first);
    const live = await scheduled(first.app.get<EventStore>(EVENT_STORE));
    expect(live).toEqual(expected);
    await first.close();

    // A new store with every event but the fan-out's own: the decisions are taken again from scratch.
    const dataDir = mkdtempSync(join(tmpdir(), 'filing-replay-'));
    const source = new SqliteEventStore({ file: join(first.dataDir, 'events.db') });
    const target = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    try {
      const events: RecordedEvent[] = await source.readAll({ maxCount: 1_000_000 });
      for (const e of events) {
        if (e.type.startsWith('webhooks.Delivery')) continue;
        await target.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }]);
      }
    } finally {
      await source.close();
      await target.close();
    }
    // Signing secrets are sealed under the data directory's key file (sqlite, no SECRETS_KEY): it goes with the events.
    copyFileSync(join(first.dataDir, 'cursor.key'), join(dataDir, 'cursor.key'));

    replayed = await startService({ env, reuse: { dataDir } });
    await fanOutCaughtUp(replayed);
    expect(await scheduled(replayed.app.get<EventStore>(EVENT_STORE))).toEqual(live);
  });
});

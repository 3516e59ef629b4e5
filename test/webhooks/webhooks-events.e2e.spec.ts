/**
 * The Events API (CONTRACT.md §3 "Events"), on both stores: every notification of the account,
 * oldest first in stream order, each exactly the webhook body a receiver got (plus
 * `occurred_at`); `after_event_id` and `event_type` filters; no page skips an event while
 * writers append. Expected answers come from the event store itself (`$all`).
 */
import { rmSync } from 'node:fs';
import { MISSING_ID } from '../support/api';
import { provisionAccount, provisionClient, provisionOperator } from '../support/auth';
import {
  notificationRound,
  NOTIFICATIONS_PER_ROUND,
  storedNotifications,
  type StoredNotification,
} from '../support/notifications';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

interface EventItem {
  readonly event_id: string;
  readonly event_type: string;
  readonly occurred_at: string;
  readonly [field: string]: unknown;
}

interface Walk {
  readonly items: EventItem[];
  /** Each page's body as the service sent it. */
  readonly texts: string[];
}

describe.each(['sqlite', 'esdb'] as const)('the Events API on the %s store', (eventStore) => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let service: TestService;
  let operator: Api;
  const accounts: Array<{ id: string; api: Api; token: string }> = [];

  beforeAll(async () => {
    pki = makeTestPki('Events');
    receiver = await startReceiver(pki);
    service = await startService({
      eventStore,
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    operator = apiClient(service.url, (await provisionOperator(service)).token);
    for (const name of ['a', 'b']) {
      const acc = await provisionAccount(service);
      const api = apiClient(service.url, acc.token);
      const endpoint = (
        await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url.replace('/hook', `/hook-${name}`) })
      ).body;
      expect((await api('POST', `${V1}/webhook-endpoints/${endpoint.id}/enable`)).status).toBe(200);
      expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
      accounts.push({ id: acc.accountId, api, token: acc.token });
    }
    // 300 notifications of all eleven types, the two accounts' rounds interleaved in the stream.
    const rounds = 300 / NOTIFICATIONS_PER_ROUND;
    await Promise.all(
      accounts.map(async (acc, i) => {
        for (let n = i; n < rounds; n += accounts.length) await notificationRound(acc.api, operator, n);
      }),
    );
    await receiver.waitForEvents(300);
  }, 180_000);
  afterAll(async () => {
    await service?.destroy();
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  /** Every page of `/events?<query>`, following next_cursor (bounded). */
  async function walk(token: string, query: string, limit: number): Promise<Walk> {
    const items: EventItem[] = [];
    const texts: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const res: Response = await fetch(
        `${service.url}${V1}/events?${query}${query ? '&' : ''}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      const text = await res.text();
      expect(res.status).toBe(200);
      const page = JSON.parse(text) as { data: EventItem[]; next_cursor: string | null };
      expect(page.data.length).toBeLessThanOrEqual(limit);
      items.push(...page.data);
      texts.push(text);
      cursor = page.next_cursor;
      if (cursor === null) return { items, texts };
    }
    throw new Error('More than 1000 pages');
  }

  const ids = (list: ReadonlyArray<{ event_id: string }>) => list.map((e) => e.event_id);

  it("pages each account's own notifications, in stream order, each the delivered webhook body plus occurred_at", async () => {
    const types = new Set<string>();
    for (const [i, acc] of accounts.entries()) {
      const stored = await storedNotifications(service, acc.id);
      expect(stored.length).toBe(i === 0 ? 156 : 144);
      const { items, texts } = await walk(acc.token, '', 37);
      expect(ids(items)).toEqual(ids(stored));
      const body = new Map(
        receiver.requests
          .filter((r) => r.path === `/hook-${'ab'[i]}`)
          .map((r) => [String(r.headers['webhook-id']), r.body]),
      );
      const sent = texts.join('');
      for (const [n, item] of items.entries()) {
        expect(item.occurred_at).toBe(stored[n].occurred_at);
        expect(item.event_type).toBe(stored[n].event_type);
        expect(item.timestamp).toBe(stored[n].occurred_at);
        // Byte-equal: the item as sent is the webhook body with occurred_at added at its end.
        const delivered = body.get(item.event_id)!;
        expect(delivered).toBeDefined();
        expect(sent).toContain(`${delivered.slice(0, -1)},"occurred_at":${JSON.stringify(item.occurred_at)}}`);
        types.add(item.event_type);
      }
    }
    expect(types.size).toBe(11);
  });

  it('resumes right after after_event_id, also across pages', async () => {
    const [a] = accounts;
    const stored = await storedNotifications(service, a.id);
    for (const at of [0, 99, stored.length - 2, stored.length - 1]) {
      const { items } = await walk(a.token, `after_event_id=${stored[at].event_id}`, 20);
      expect([at, ids(items)]).toEqual([at, ids(stored.slice(at + 1))]);
    }
  });

  it('filters by event_type, repeated or comma-separated, alone or with after_event_id', async () => {
    const [, b] = accounts;
    const stored = await storedNotifications(service, b.id);
    const only = (list: StoredNotification[], wanted: string[]) =>
      ids(list.filter((e) => wanted.includes(e.event_type)));
    const wanted = ['order.completed', 'entity.created', 'document.deleted'];
    const expected = only(stored, wanted);
    expect(expected.length).toBe(36);
    expect(
      ids(
        (await walk(b.token, 'event_type=order.completed&event_type=entity.created&event_type=document.deleted', 10))
          .items,
      ),
    ).toEqual(expected);
    expect(ids((await walk(b.token, 'event_type=order.completed,entity.created,document.deleted', 10)).items)).toEqual(
      expected,
    );
    expect(
      ids((await walk(b.token, 'event_type=order.completed,entity.created&event_type=document.deleted', 7)).items),
    ).toEqual(expected);
    const from = stored[50].event_id;
    expect(ids((await walk(b.token, `event_type=task.created&after_event_id=${from}`, 5)).items)).toEqual(
      only(stored.slice(51), ['task.created']),
    );
  });

  it("refuses another account's after_event_id, an unknown one and unknown event types with a 400 naming the parameter", async () => {
    const [a, b] = accounts;
    const theirs = (await storedNotifications(service, b.id))[0].event_id;
    const cases: Array<[string, string[]]> = [
      [`after_event_id=${theirs}`, ['after_event_id']],
      [`after_event_id=${MISSING_ID}`, ['after_event_id']],
      ['after_event_id=not-an-id', ['after_event_id']],
      ['event_type=entity.created,no.such', ['event_type']],
      ['event_type=entity.created&event_type=', ['event_type']],
      ['event_type=webhook.nope&limit=0', ['event_type', 'limit']],
      ['event_types=entity.created', ['event_types']],
    ];
    for (const [query, fields] of cases) {
      const res = await a.api('GET', `${V1}/events?${query}`);
      expect({ query, status: res.status, type: res.headers.get('content-type') }).toEqual({
        query,
        status: 400,
        type: 'application/problem+json; charset=utf-8',
      });
      expect([query, res.body.errors.map((e: { field: string }) => e.field).sort()]).toEqual([query, fields.sort()]);
    }
  });

  it('needs the read scope', async () => {
    const [a] = accounts;
    const writeOnly = apiClient(service.url, (await provisionClient(service, a.id, 'write')).token);
    const readOnly = apiClient(service.url, (await provisionClient(service, a.id, 'read')).token);
    const refused = await writeOnly('GET', `${V1}/events`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer realm="external-api", error="insufficient_scope", scope="read"',
    );
    const page = await readOnly('GET', `${V1}/events?limit=3`);
    expect(page.status).toBe(200);
    expect(ids(page.body.data)).toEqual(ids((await storedNotifications(service, a.id)).slice(0, 3)));
  });

  it('never skips an event while writers append: two walks to the end under load are each a prefix of the stream', async () => {
    const [a] = accounts;
    const before = (await storedNotifications(service, a.id)).length;
    let writing = true;
    const writers = Promise.all(
      Array.from({ length: 3 }, async (_, w) => {
        for (let n = 0; n < 40; n++) {
          const res = await a.api('POST', `${V1}/entities`, { name: `Load ${w}-${n}`, entity_type: 'llc' });
          expect(res.status).toBe(201);
        }
      }),
    ).finally(() => (writing = false));
    const walks: EventItem[][] = [];
    while ((walks.length < 2 || writing) && walks.length < 100) walks.push((await walk(a.token, '', 7)).items);
    await writers;
    const stored = ids(await storedNotifications(service, a.id));
    expect(stored.length).toBe(before + 120);
    for (const seen of walks) expect(ids(seen)).toEqual(stored.slice(0, seen.length));
    expect(ids((await walk(a.token, '', 50)).items)).toEqual(stored);
  });
});

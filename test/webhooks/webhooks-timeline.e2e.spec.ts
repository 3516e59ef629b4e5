/**
 * Issue 50 items 5–6 end to end, on both stores: `GET /events/{id}` shows where a notification
 * went (every endpoint's delivery, every attempt), and the operational notifications warn before
 * it breaks: `webhook_endpoint.failing` once per failing streak, before `webhook_endpoint.disabled`,
 * and `webhook_delivery.failed` once per delivery that gave up, each valid against its published
 * schema; a replay brings a new endpoint the account's history. Retry delays, WEBHOOK_FAILING_AFTER and WEBHOOK_DISABLE_AFTER compressed; every
 * assertion waits for outcomes.
 */
import { provisionAccount, provisionOperator } from '../support/auth';
import { notificationRound, NOTIFICATIONS_PER_ROUND } from '../support/notifications';
import { webhookHarness } from '../support/webhook-harness';
import type { Reply } from '../support/webhook-receiver';
import { accountWithEndpoints, apiClient, type Api, type EndpointSpec, eventually } from '../support/webhooks';
import { expectValid, publishedValidators } from '../support/payload-schemas';

const V1 = '/external-api/v1';
const FAILING = 'webhook_endpoint.failing';
const DISABLED = 'webhook_endpoint.disabled';
const DELIVERY_FAILED = 'webhook_delivery.failed';

describe.each(['sqlite', 'esdb'] as const)(
  'event timelines and operational notifications on the %s store',
  (eventStore) => {
    const h = webhookHarness({
      eventStore,
      env: {
        // Failures keep coming for ~5 s: past WEBHOOK_FAILING_AFTER, then WEBHOOK_DISABLE_AFTER.
        WEBHOOK_RETRY_DELAYS: Array(20).fill('250ms').join(','),
        WEBHOOK_FAILING_AFTER: '1s',
        WEBHOOK_DISABLE_AFTER: '3s',
      },
    });
    const receiver = (fallback?: Reply, ...script: Reply[]) => h.receiver(fallback, ...script);

    async function account(specs: EndpointSpec[]) {
      const { api, endpoints } = await accountWithEndpoints(h.service, specs);
      return { api, ids: endpoints.map((e) => e.id) };
    }

    const createEntity = async (api: Api, name: string): Promise<string> => {
      const res = await api('POST', `${V1}/entities`, { name, entity_type: 'llc' });
      expect(res.status).toBe(201);
      return res.body.id;
    };

    it("lists every endpoint's delivery and attempts of one event, and hides it from another account", async () => {
      const first = await receiver();
      const second = await receiver();
      const flaky = await receiver({ status: 200 }, { status: 500 });
      const { api, ids } = await account([{ url: first.url }, { url: second.url }, { url: flaky.url }]);
      await createEntity(api, 'Timeline LLC');
      const [req] = await first.waitForEvents(1);
      const eventId = String(req.json.event_id);

      const timeline = await eventually(async () => {
        const res = await api('GET', `${V1}/events/${eventId}`);
        const done =
          res.status === 200 && res.body.deliveries.every((d: { status: string }) => d.status === 'delivered');
        return done && res.body.deliveries.length === 3 ? res.body : undefined;
      });
      expect(timeline).toMatchObject({
        event_id: eventId,
        event_type: 'entity.created',
        occurred_at: expect.any(String),
      });
      const byEndpoint = new Map(
        (timeline.deliveries as Array<{ endpoint_id: string; attempts: Array<{ status_code: number }> }>).map((d) => [
          d.endpoint_id,
          d,
        ]),
      );
      expect([...byEndpoint.keys()].sort()).toEqual([...ids].sort());
      expect(byEndpoint.get(ids[0])!.attempts.map((a) => a.status_code)).toEqual([200]);
      expect(byEndpoint.get(ids[1])!.attempts.map((a) => a.status_code)).toEqual([200]);
      expect(byEndpoint.get(ids[2])!.attempts.map((a) => a.status_code)).toEqual([500, 200]);
      for (const d of timeline.deliveries) {
        expect(Object.keys(d).sort()).toEqual(['attempts', 'delivery_id', 'endpoint_id', 'status']);
        for (const a of d.attempts)
          expect(Object.keys(a).sort()).toEqual(['attempted_at', 'duration_ms', 'error', 'status_code']);
      }

      const other = apiClient(h.service.url, (await provisionAccount(h.service)).token);
      const hidden = await other('GET', `${V1}/events/${eventId}`);
      expect(hidden.status).toBe(404);
      expect(hidden.headers.get('content-type')).toMatch(/problem\+json/);
    });

    it('replays the history to an endpoint made after it: the matching notifications, their original ids', async () => {
      const { api } = await account([]);
      const operator = apiClient(h.service.url, (await provisionOperator(h.service)).token);
      await notificationRound(api, operator, 0);
      const history = (await api('GET', `${V1}/events?limit=100`)).body.data as Array<{
        event_id: string;
        event_type: string;
      }>;
      expect(history).toHaveLength(NOTIFICATIONS_PER_ROUND);
      const selection = ['order.submitted', 'order.completed'];
      const r = await receiver();
      const created = await api('POST', `${V1}/webhook-endpoints`, { url: r.url, event_types: selection });
      expect((await api('POST', `${V1}/webhook-endpoints/${created.body.id}/enable`)).status).toBe(200);
      const res = await api('POST', `${V1}/webhook-endpoints/${created.body.id}/replay`, {
        since: '2000-01-01T00:00:00.000Z',
      });
      const expected = history.filter((e) => selection.includes(e.event_type)).map((e) => e.event_id);
      expect([res.status, res.body]).toEqual([202, { deliveries: expected.length }]);
      const got = await r.waitForEvents(expected.length);
      expect(got.map((q) => String(q.headers['webhook-id'])).sort()).toEqual([...expected].sort());
      for (const q of got) expect(q.json.event_id).toBe(q.headers['webhook-id']);
    });

    it('warns once per failing streak before the disable, and reports each delivery that gave up once', async () => {
      const failing = await receiver({ status: 500 });
      const refusing = await receiver({ status: 400 });
      const watcher = await receiver();
      const { api, ids } = await account([
        { url: failing.url, event_types: ['entity.created'] },
        { url: refusing.url, event_types: ['entity.updated'] },
        { url: watcher.url, event_types: [FAILING, DISABLED, DELIVERY_FAILED] },
      ]);
      const [bad, refused, watching] = ids;
      const validators = await publishedValidators(api);
      const entity = await createEntity(api, 'Failing LLC');
      // Two deliveries the receiver refuses (400: no retry): each gives up once.
      for (const status of ['inactive', 'active'])
        expect((await api('PATCH', `${V1}/entities/${entity}`, { status })).status).toBe(200);

      const ofType = (type: string, endpointId = bad) =>
        watcher.requests.filter((q) => q.json.event_type === type && q.json.endpoint_id === endpointId);
      await eventually(() => (ofType(DISABLED).length > 0 ? true : undefined), 50);
      const endpoint = (await api('GET', `${V1}/webhook-endpoints/${bad}`)).body;
      expect(endpoint.disabled_reason).toBe('failing');

      const warnings = ofType(FAILING);
      expect(new Set(warnings.map((q) => q.headers['webhook-id'])).size).toBe(1);
      const [warning] = warnings;
      const [disabled] = ofType(DISABLED);
      expect(watcher.requests.indexOf(warning)).toBeLessThan(watcher.requests.indexOf(disabled));
      const streams = await h.store.readStream(`webhookendpoint-${bad}`);
      const reported = streams.filter((e) => e.type === 'webhooks.EndpointFailing');
      expect(reported.map((e) => e.id)).toEqual([warning.json.event_id]);
      expect(warning.json.failing_since).toBe(reported[0].data.failing_since);
      expect(warning.json.resource_version).toBe(Number(reported[0].revision));
      expect(disabled.json.resource_version).toBe(endpoint.version);
      for (const q of [warning, disabled]) expectValid(validators, q.json);

      // The refused deliveries: one notice each, naming the delivery, its endpoint and notification.
      const refusedLog = (await api('GET', `${V1}/webhook-endpoints/${refused}/deliveries`)).body.data as Array<{
        id: string;
        event_id: string;
        status: string;
      }>;
      expect(refusedLog.map((d) => d.status)).toEqual(['failed', 'failed']);
      const notices = await eventually(() => {
        const got = ofType(DELIVERY_FAILED, refused);
        return got.length >= 2 ? got : undefined;
      });
      const noticeOf = new Map(notices.map((q) => [q.json.delivery_id, q.json]));
      for (const d of refusedLog) {
        expect(noticeOf.get(d.id)).toMatchObject({
          endpoint_id: refused,
          failed_event_id: d.event_id,
          failed_event_type: 'entity.updated',
        });
        expectValid(validators, noticeOf.get(d.id)!);
      }
      expect(new Set(notices.map((q) => q.headers['webhook-id'])).size).toBe(notices.length);
      expect(noticeOf.size).toBe(2);
      // A second streak (re-enabled, failing again): warned once more, with its own failing_since.
      expect((await api('POST', `${V1}/webhook-endpoints/${bad}/enable`)).status).toBe(200);
      await createEntity(api, 'Still Failing LLC');
      await eventually(() => (ofType(DISABLED).length > 1 ? true : undefined), 50);
      const streaks = [...new Map(ofType(FAILING).map((q) => [q.headers['webhook-id'], q.json])).values()];
      expect(streaks).toHaveLength(2);
      expect(streaks[1].failing_since).not.toBe(streaks[0].failing_since);
      // The Events API lists them when named, never unasked.
      const named = await api('GET', `${V1}/events?event_type=${FAILING}`);
      expect(named.body.data.map((e: { event_id: string }) => e.event_id).sort()).toEqual(
        streaks.map((n) => n.event_id).sort(),
      );
      const all = await api('GET', `${V1}/events?limit=200`);
      expect(all.body.data.filter((e: { event_type: string }) => e.event_type.startsWith('webhook_'))).toEqual([]);

      // Operational notices go only to the endpoint that named them, and never about the watcher itself.
      expect(watcher.requests.every((q) => q.json.endpoint_id !== watching)).toBe(true);
      expect(failing.requests.every((q) => q.json.event_type === 'entity.created')).toBe(true);
    }, 60_000);
  },
);

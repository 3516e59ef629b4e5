/**
 * The README's "catch up after downtime" recipe, run against the real service: a receiver (the
 * example receiver, deduplicating on webhook-id) is down while 100 events happen; it catches up
 * through the Events API from the last event it processed, with the same dedupe store, and the
 * webhooks recovered afterwards arrive as duplicates. Each event is processed exactly once.
 */
import { Deduplicator, FilingClient, MemoryDedupeStore, type WebhookEvent } from '@filing/client';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import type { Server } from 'node:https';
import { createReceiver } from '../../apps/example-receiver/src/receiver';
import { provisionAccount } from '../support/auth';
import { storedNotifications } from '../support/notifications';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { eventually } from '../support/webhooks';

describe('catching up after downtime with the SDK', () => {
  let pki: TestPki;
  let service: TestService;
  let server: Server | undefined;

  beforeAll(async () => {
    pki = makeTestPki('CatchUp');
    // Retries give up within milliseconds: the deliveries made while the receiver is down fail.
    service = await startService({
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '10ms,20ms' },
    });
  });
  afterAll(async () => {
    server?.closeAllConnections();
    server?.close();
    await service?.destroy();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  it('a receiver down for 100 events catches up through the Events API and processes each event once', async () => {
    const store = new MemoryDedupeStore();
    const processed = new Map<string, number>();
    const process = (event: WebhookEvent) => processed.set(event.event_id, (processed.get(event.event_id) ?? 0) + 1);
    let down = false;
    let lastProcessed = '';
    const lines: string[] = [];
    const secrets: string[] = [];
    server = createReceiver({
      secrets,
      store,
      tls: { cert: pki.cert, key: pki.key },
      log: (line) => lines.push(line),
      onEvent: (event) => {
        if (down) throw new Error('our database is down');
        process(event);
        lastProcessed = event.event_id;
      },
    }) as Server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');

    const account = await provisionAccount(service);
    const filing = new FilingClient({
      baseUrl: service.url,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
    });
    const endpoint = await filing.webhookEndpoints.create({
      url: `https://127.0.0.1:${(server.address() as { port: number }).port}/webhooks`,
    });
    secrets.push(endpoint.secret);
    await filing.webhookEndpoints.enable(endpoint.id);
    await filing.webhookSettings.update({ notifications_enabled: true });

    // Up: five events, each processed (live) before the next happens.
    for (let i = 0; i < 5; i++) {
      await filing.entities.create({ name: `Live ${i} LLC`, entity_type: 'llc' });
      await eventually(() => (processed.size === i + 1 ? true : undefined));
    }
    const checkpoint = lastProcessed;

    // Down: 100 events; every delivery fails (500 on each attempt).
    down = true;
    for (let i = 0; i < 100; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          filing.entities.create({ name: `Missed ${i + j} LLC`, entity_type: 'llc' }),
        ),
      );
    }
    await eventually(async () => {
      let failed = 0;
      for await (const _ of filing.webhookEndpoints.deliveriesAll(endpoint.id, { status: 'failed', limit: 200 }))
        failed++;
      return failed === 100 ? true : undefined;
    });
    expect(processed.size).toBe(5);
    down = false;

    // The recipe: iterate from the last processed event, deduplicating with the receiver's store.
    const dedupe = new Deduplicator({ store });
    let last = checkpoint;
    for await (const event of filing.events.listAll({ after_event_id: checkpoint, limit: 30 })) {
      await dedupe.run(event.event_id, () => process(event));
      last = event.event_id;
    }
    const stored = await storedNotifications(service, account.accountId);
    expect(stored).toHaveLength(105);
    expect(last).toBe(stored[104].event_id);
    expect([...processed.keys()].sort()).toEqual(stored.map((e) => e.event_id).sort());

    // The failed webhooks, sent again, are duplicates to the receiver: nothing is processed twice.
    const { deliveries } = await filing.webhookEndpoints.recover(endpoint.id, { since: new Date(0) });
    expect(deliveries).toBe(100);
    await eventually(async () => ((await filing.webhookEndpoints.stats(endpoint.id)).pending === 0 ? true : undefined));
    await eventually(() => (lines.filter((l) => l.startsWith('duplicate ')).length >= 100 ? true : undefined));
    expect(await filing.webhookEndpoints.stats(endpoint.id)).toMatchObject({ pending: 0, failing_since: null });
    expect([...processed.values()].every((n) => n === 1)).toBe(true);
    expect(processed.size).toBe(105);
  }, 120_000);
});

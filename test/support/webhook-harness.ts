/**
 * The set-up of a webhooks e2e: a service that trusts a test CA and may call 127.0.0.1, and real
 * HTTPS receivers under that CA; started before the spec's tests, all of it destroyed after.
 */
import { rmSync } from 'node:fs';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { startService, type TestService } from './service';
import { makeTestPki, type TestPki } from './tls-certs';
import { type Reply, startReceiver, type WebhookReceiver } from './webhook-receiver';

export interface WebhookHarness {
  /** Set once the spec's `beforeAll` hooks have run. */
  readonly service: TestService;
  readonly store: EventStore;
  /** A receiver answering `script` in order, then `fallback` (default 200). */
  receiver(fallback?: Reply, ...script: Reply[]): Promise<WebhookReceiver>;
}

export function webhookHarness(options: {
  readonly eventStore?: 'sqlite' | 'esdb';
  readonly env?: NodeJS.ProcessEnv;
}): WebhookHarness {
  let pki: TestPki | undefined;
  let service: TestService | undefined;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    pki = makeTestPki();
    service = await startService({
      eventStore: options.eventStore,
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...options.env },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.destroy();
    await Promise.all(receivers.map((r) => r.close()));
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });
  return {
    get service() {
      return service!;
    },
    get store() {
      return service!.app.get<EventStore>(EVENT_STORE);
    },
    async receiver(fallback: Reply = { status: 200 }, ...script: Reply[]) {
      const r = await startReceiver(pki!);
      r.fallback = fallback;
      r.script(...script);
      receivers.push(r);
      return r;
    },
  };
}

import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { buildMetadata, loadConfig, toEventData } from '@filing/platform';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
import { createApp } from '../apps/service/src/bootstrap';
import { provisionAccount } from '../test/support/auth';
import { makeTestPki, type TestPki } from '../test/support/tls-certs';
import { apiClient } from '../test/support/webhooks';
import { printComparison, rate } from './report';

const EVENTS_ONE = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const EVENTS_TEN = Number(process.env.BENCH_WEBHOOK_EVENTS_TEN ?? 2_000);
const PACED = Number(process.env.BENCH_WEBHOOK_PACED ?? 500);
const PACED_RATE = 200; // events/s for the latency run
const RAW_CONCURRENCY = 64; // the dispatcher's overall bound

/** Receipt times by `<path> <webhook-id>`, and a way to wait for a count. */
class Receiver {
  readonly received = new Map<string, number>();
  private target = 0;
  private done: (() => void) | null = null;
  url = '';
  private readonly server;

  constructor(pki: TestPki) {
    this.server = createServer({ cert: pki.cert, key: pki.key, keepAliveTimeout: 60_000 }, (req, res) => {
      req.resume();
      req.on('end', () => {
        const key = `${req.url} ${String(req.headers['webhook-id'] ?? randomUUID())}`;
        if (!this.received.has(key)) this.received.set(key, performance.now());
        res.writeHead(204).end();
        if (this.done && this.received.size >= this.target) this.done();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  waitForTotal(n: number): Promise<void> {
    this.target = n;
    return this.received.size >= n ? Promise.resolve() : new Promise((resolve) => (this.done = resolve));
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/**
 * The service in-process (sqlite store), a local HTTPS receiver, and EntityCreated events appended
 * straight to the store (the API is not what is measured). Figures: deliveries/s end to end
 * (fan-out → DeliveryScheduled → read model → dispatcher → signed POST → outcome events) for one
 * endpoint and for ten, and append→receipt latency, bulk and paced; next to a raw undici POST
 * loop (same agent settings, same concurrency, same receiver) in the same run.
 */
export async function webhooksBench(): Promise<void> {
  const pki = makeTestPki('Bench');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const receiver = new Receiver(pki);
  await receiver.start();
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WEBHOOK_CA_FILE: pki.caFile,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS: '1s',
  });
  const app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const service = { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  const store = app.get<EventStore>(EVENT_STORE);
  try {
    const one = await account(service, receiver, 1);
    const ten = await account(service, receiver, 10);

    const bulkOne = await run(store, receiver, one, EVENTS_ONE, 1);
    const bulkTen = await run(store, receiver, ten, EVENTS_TEN, 10);
    const paced = await run(store, receiver, one, PACED, 1, PACED_RATE);
    const raw = await rawLoop(receiver.url, pki, EVENTS_ONE);

    printComparison(
      `webhook deliveries, ${EVENTS_ONE} events → 1 endpoint`,
      rate(bulkOne.deliveries, bulkOne.ms),
      `raw undici POST loop, ${RAW_CONCURRENCY} concurrent, same receiver`,
      rate(EVENTS_ONE, raw.ms),
      'deliveries/s',
    );
    printComparison(
      `webhook deliveries, ${EVENTS_TEN} events → 10 endpoints`,
      rate(bulkTen.deliveries, bulkTen.ms),
      `raw undici POST loop, ${RAW_CONCURRENCY} concurrent, same receiver`,
      rate(EVENTS_ONE, raw.ms),
      'deliveries/s',
    );
    console.log(`append→receipt, bulk 1 endpoint (queueing included): p50 ${ms(bulkOne.p50)}, p99 ${ms(bulkOne.p99)}`);
    console.log(
      `append→receipt, bulk 10 endpoints (queueing included): p50 ${ms(bulkTen.p50)}, p99 ${ms(bulkTen.p99)}`,
    );
    console.log(
      `append→receipt, paced ${PACED} events at ${PACED_RATE}/s, 1 endpoint: p50 ${ms(paced.p50)}, p99 ${ms(paced.p99)}`,
    );
    console.log(`raw undici POST latency, ${RAW_CONCURRENCY} concurrent: p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)}`);
  } finally {
    await app.close();
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(pki.dir, { recursive: true, force: true });
  }
}

interface Account {
  readonly accountId: string;
  readonly paths: string[];
}

async function account(
  service: { app: Parameters<typeof provisionAccount>[0]['app']; url: string },
  receiver: Receiver,
  endpoints: number,
): Promise<Account> {
  const acc = await provisionAccount(service as Parameters<typeof provisionAccount>[0]);
  const api = apiClient(service.url, acc.token);
  const paths: string[] = [];
  for (let i = 0; i < endpoints; i++) {
    const path = `/hook/${acc.accountId.slice(-6)}/${i}`;
    const ep = await api('POST', '/external-api/v1/webhook-endpoints', {
      url: receiver.url + path,
      event_types: ['entity.created'],
    });
    await api('POST', `/external-api/v1/webhook-endpoints/${ep.body.id}/enable`);
    paths.push(path);
  }
  await api('PUT', '/external-api/v1/webhook-settings', { notifications_enabled: true });
  return { accountId: acc.accountId, paths };
}

/** Appends `events` EntityCreated (all at once, or paced at `perSecond`) and waits for every delivery. */
async function run(
  store: EventStore,
  receiver: Receiver,
  acc: Account,
  events: number,
  endpoints: number,
  perSecond?: number,
) {
  const appendedAt = new Map<string, number>();
  const expected = receiver.received.size + events * endpoints;
  const done = receiver.waitForTotal(expected);
  const started = performance.now();
  const context = { account_id: acc.accountId, actor: 'bench', correlation_id: randomUUID(), causation_id: null };
  const appendOne = async () => {
    const id = uuidv7();
    const data = toEventData(
      {
        type: 'entities.EntityCreated',
        data: {
          entity_id: id,
          name: 'Bench LLC',
          entity_type: 'llc',
          status: 'active',
          formation_jurisdiction: null,
          formation_date: null,
        },
      },
      buildMetadata(context),
    );
    appendedAt.set(data.id, performance.now());
    await store.appendToStream(`entity-${id}`, [data], { expectedRevision: 'no_stream' });
  };
  if (perSecond) {
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void appendOne();
    }
  } else {
    await Promise.all(Array.from({ length: events }, appendOne));
  }
  await done;
  const elapsed = performance.now() - started;
  const latencies: number[] = [];
  for (const [eventId, at] of appendedAt) {
    for (const path of acc.paths) {
      const got = receiver.received.get(`${path} ${eventId}`);
      if (got !== undefined) latencies.push(got - at);
    }
  }
  latencies.sort((a, b) => a - b);
  return { deliveries: events * endpoints, ms: elapsed, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

/** The same kind of request (JSON body, signature-sized headers) over the same kind of undici agent. */
async function rawLoop(url: string, pki: TestPki, count: number) {
  const agent = new Agent({
    connections: 16,
    keepAliveTimeout: 30_000,
    connect: { ca: [...rootCertificates, readFileSync(pki.caFile, 'utf8')] },
  });
  const body = JSON.stringify({
    event_id: randomUUID(),
    event_type: 'entity.created',
    timestamp: new Date().toISOString(),
    entity_id: randomUUID(),
    status: 'active',
  });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: RAW_CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        const t0 = performance.now();
        const res = await request(`${url}/raw`, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'webhook-id': randomUUID(),
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': `v1,${'x'.repeat(44)}`,
          },
          body,
        });
        await res.body.dump();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - started;
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { ms: elapsed, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

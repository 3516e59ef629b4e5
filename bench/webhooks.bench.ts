import type Database from 'better-sqlite3';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { DISPATCHER_LIMITS } from '@filing/webhooks';
import { buildMetadata, loadConfig, ProcessorRegistry, toEventData } from '@filing/platform';
import { type ChildProcess, fork } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
import { createApp } from '../apps/service/src/bootstrap';
import { provisionAccount } from '../test/support/auth';
import { makeTestPki, type TestPki } from '../test/support/tls-certs';
import { apiClient, eventually } from '../test/support/webhooks';
import { openRawEvents } from './raw-events-db';
import { printBaseline, printComparison, printCpuCeiling, rate } from './report';

const EVENTS_ONE = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const EVENTS_TEN = Number(process.env.BENCH_WEBHOOK_EVENTS_TEN ?? 2_000);
const PACED = Number(process.env.BENCH_WEBHOOK_PACED ?? 3_000);
const PACED_RATE = 500; // events/s for the latency run
const DRAINED = Number(process.env.BENCH_WEBHOOK_DRAINED ?? EVENTS_ONE);
const TEN = 10;
/**
 * Requests (and events) each side runs before anything is measured. Cold, the first raw loop of
 * the process ran at ~half the speed of the same loop later in the run (92 against 52 µs of CPU
 * per POST): JIT and heap still settling. The service warms up the same way, on one endpoint.
 */
const WARMUP = Number(process.env.BENCH_WEBHOOK_WARMUP ?? 5_000);

/** The receiver child process (bench/webhook-receiver.ts): one HTTPS origin per endpoint. */
class Receiver {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<string, (message: ReceiverMessage) => void>();
  origins: string[] = [];

  constructor(pki: TestPki & { certFile: string; keyFile: string }) {
    this.child = fork(join(__dirname, 'webhook-receiver.ts'), [], {
      execArgv: ['-r', '@swc-node/register'],
      env: { ...process.env, RECEIVER_CERT: pki.certFile, RECEIVER_KEY: pki.keyFile, RECEIVER_PORTS: String(TEN) },
    });
    this.child.on('message', (message: ReceiverMessage) => {
      const kind = Object.keys(message)[0];
      const resolve = this.waiting.get(kind);
      this.waiting.delete(kind);
      resolve?.(message);
    });
  }

  private next(kind: keyof ReceiverMessage): Promise<ReceiverMessage> {
    return new Promise((resolve) => this.waiting.set(kind, resolve));
  }

  async start(): Promise<void> {
    const { ports = [] } = await this.next('ports');
    this.origins = ports.map((port) => `https://127.0.0.1:${port}`);
  }

  /** Forgets earlier receipts; resolves once `n` distinct deliveries arrived. */
  expect(n: number): Promise<void> {
    const reached = this.next('reached');
    this.child.send({ expect: n });
    return reached.then(() => undefined);
  }

  /** Leaves requests unanswered (receipts still count) until `release`. */
  hold(): void {
    this.child.send({ hold: true });
  }

  /** Answers the held requests, and every later one at once. */
  release(): void {
    this.child.send({ release: true });
  }

  /** Receipt time (epoch ms) by `<path> <webhook-id>`. */
  async times(): Promise<Map<string, number>> {
    const answer = this.next('times');
    this.child.send({ times: true });
    return new Map((await answer).times);
  }

  close(): void {
    this.child.kill();
  }
}

interface ReceiverMessage {
  ports?: number[];
  reached?: number;
  times?: Array<[string, number]>;
}

const now = () => performance.timeOrigin + performance.now();
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const us = (n: number) => `${Math.round(n)} µs`;
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(since);
  return user + system;
};
/** The service's named threads (docs/operations.md, "Threads"); V8's and libuv's are the rest. */
const NAMED_THREADS = ['store-writer', 'webhook-sender', 'wal-checkpoint'] as const;
type ThreadTicks = Record<'main' | (typeof NAMED_THREADS)[number] | 'rest', number>;
/**
 * CPU ticks (1/100 s) of each thread group so far, from /proc (Linux; zeros elsewhere):
 * process.cpuUsage() adds every thread up, and the main thread is the bottleneck.
 */
function threadTicks(): ThreadTicks {
  const ticks: ThreadTicks = { main: 0, 'store-writer': 0, 'webhook-sender': 0, 'wal-checkpoint': 0, rest: 0 };
  let tasks: string[] = [];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return ticks;
  }
  for (const tid of tasks) {
    try {
      // After the name's closing parenthesis: utime and stime are the 12th and 13th fields.
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const used = Number(fields[11]) + Number(fields[12]);
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(') '));
      const group = NAMED_THREADS.find((n) => n === name);
      if (tid === String(process.pid)) ticks.main += used;
      else if (group !== undefined) ticks[group] += used;
      else ticks.rest += used;
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ticks;
}
/** The machine's CPU ticks (all cores, /proc/stat; zeros elsewhere): busy and all. */
function machineTicks(): { busy: number; all: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const all = fields.reduce((a, b) => a + b, 0);
    // idle and iowait
    return { busy: all - fields[3] - fields[4], all };
  } catch {
    return { busy: 0, all: 0 };
  }
}
/** Cores busy on average since `before` (every process: the receiver's too). */
function machineBusy(before: { busy: number; all: number }): number {
  const after = machineTicks();
  return after.all === before.all ? NaN : ((after.busy - before.busy) / (after.all - before.all)) * cpus().length;
}
/**
 * What the service spends from now until the returned function is called, per delivery: this
 * process's CPU (µs, all threads), its main thread's and the other threads', and the cores the
 * machine kept busy meanwhile.
 */
function serviceMeter(): (deliveries: number) => ServiceCpu {
  const cpu = process.cpuUsage();
  const ticks = threadTicks();
  const machine = machineTicks();
  return (deliveries) => {
    const cpuUs = cpuMicros(cpu) / deliveries;
    const after = threadTicks();
    // Ticks are 1/100 s: 10,000 µs each.
    const perDelivery = (group: keyof ThreadTicks) => ((after[group] - ticks[group]) * 10_000) / deliveries;
    const named = NAMED_THREADS.map(perDelivery);
    const rest = perDelivery('rest');
    return {
      cpuUs,
      mainUs: perDelivery('main'),
      othersUs: named.reduce((a, b) => a + b, rest),
      byThread: `store writer ${us(named[0])}, sender ${us(named[1])}, checkpointers ${us(named[2])}, V8 and libuv ${us(rest)}`,
      busy: machineBusy(machine),
    };
  };
}
interface ServiceCpu {
  readonly cpuUs: number;
  readonly mainUs: number;
  readonly othersUs: number;
  /** The other threads' share, by thread. */
  readonly byThread: string;
  readonly busy: number;
}
/** A phase set to 0 events: nothing measured. */
const NOT_RUN: ServiceCpu = { cpuUs: NaN, mainUs: NaN, othersUs: NaN, byThread: '', busy: NaN };
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The service in-process (sqlite store), an HTTPS receiver in a child process (so its TLS work
 * does not share the service's core, as a remote receiver would not), and EntityCreated events
 * appended straight to the store (the API is not what is measured). Figures: deliveries/s end to
 * end (fan-out → DeliveryScheduled → read model → dispatcher → signed POST → outcome events) for
 * one endpoint from a backlog and for ten (one origin each), next to a raw undici POST loop to the
 * same receiver at the dispatcher's concurrency for that case (16 per endpoint, 64 overall);
 * append→receipt latency at a steady 500 events/s.
 */
export async function webhooksBench(): Promise<void> {
  console.log(`load average before the run: ${load()} (${cpus().length} cores)`);
  const pki = makeTestPki('Bench');
  writeFileSync(join(pki.dir, 'leaf.pem'), pki.cert);
  writeFileSync(join(pki.dir, 'leaf-key.pem'), pki.key);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const receiver = new Receiver({
    ...pki,
    certFile: join(pki.dir, 'leaf.pem'),
    keyFile: join(pki.dir, 'leaf-key.pem'),
  });
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
  const { perEndpoint, overall } = DISPATCHER_LIMITS;
  const tenConcurrency = Math.min(overall, TEN * perEndpoint);
  try {
    const one = await account(service, receiver.origins.slice(0, 1));
    const ten = await account(service, receiver.origins);

    /** A raw loop to the one endpoint's origin at its concurrency. */
    const rawToOne = (count: number, durable?: string, api?: 'request' | 'dispatch') =>
      rawLoop(receiver, pki, receiver.origins.slice(0, 1), count, perEndpoint, durable, api);
    await rawToOne(WARMUP);
    await rawToOne(WARMUP, undefined, 'dispatch');
    await run(store, receiver, one, Math.ceil(WARMUP / 2));

    const processors = app.get(ProcessorRegistry);
    // Each phase starts with the service idle (settle).
    const settled = () => settle(store, processors, [one, ten]);
    await settled();
    const rawOne = await rawToOne(EVENTS_ONE);
    const durableOne = await rawToOne(EVENTS_ONE, join(pki.dir, 'raw-outcomes.db'));
    const bulkOne = await run(store, receiver, one, EVENTS_ONE);
    await settled();
    const rawTen = await rawLoop(receiver, pki, receiver.origins, EVENTS_TEN * TEN, tenConcurrency);
    const bulkTen = await run(store, receiver, ten, EVENTS_TEN);
    await settled();
    const paced = await run(store, receiver, one, PACED, PACED_RATE);
    await settled();
    // The drain's baselines run right before it: the machine's speed drifts within a run.
    const rawDrain = await rawToOne(DRAINED);
    const dispatchDrain = await rawToOne(DRAINED, undefined, 'dispatch');
    const drained = await drain(store, processors, receiver, one, DRAINED);

    printComparison(
      `webhook deliveries, ${EVENTS_ONE} events → 1 endpoint`,
      rate(bulkOne.deliveries, bulkOne.ms),
      `raw undici POST loop, ${perEndpoint} concurrent, same receiver`,
      rate(EVENTS_ONE, rawOne.ms),
      'deliveries/s',
    );
    printBaseline(
      'raw loop, signed, each outcome committed to SQLite (FULL)',
      rate(EVENTS_ONE, durableOne.ms),
      rate(bulkOne.deliveries, bulkOne.ms),
      'deliveries/s',
    );
    printComparison(
      `the same, a backlog of ${DRAINED} already scheduled (drain)`,
      rate(drained.deliveries, drained.ms),
      `raw undici POST loop, ${perEndpoint} concurrent, run just before`,
      rate(DRAINED, rawDrain.ms),
      'deliveries/s',
    );
    // The sender posts with `dispatch`; the baseline loop uses `request`. Both, so the
    // ratio is never read as our stack beating a loop that merely used the slower call.
    printBaseline(
      `raw undici dispatch loop (the sender's call), just before`,
      rate(DRAINED, dispatchDrain.ms),
      rate(drained.deliveries, drained.ms),
      'deliveries/s',
    );
    // The machine's CPU (the receiver's and any other process's too) per delivery of the drain.
    printCpuCeiling(
      'the drain at that CPU (receiver too), every core busy',
      (drained.busy * 1_000_000) / rate(drained.deliveries, drained.ms),
      { name: 'the request loop', rate: rate(DRAINED, rawDrain.ms) },
      'deliveries/s',
    );
    printComparison(
      `webhook deliveries, ${EVENTS_TEN} events → ${TEN} endpoints`,
      rate(bulkTen.deliveries, bulkTen.ms),
      `raw undici POST loop, ${tenConcurrency} concurrent, ${TEN} origins`,
      rate(EVENTS_TEN * TEN, rawTen.ms),
      'deliveries/s',
    );
    console.log(`append→receipt, bulk 1 endpoint (queueing included): p50 ${ms(bulkOne.p50)}, p99 ${ms(bulkOne.p99)}`);
    console.log(
      `append→receipt, bulk ${TEN} endpoints (queueing included): p50 ${ms(bulkTen.p50)}, p99 ${ms(bulkTen.p99)}`,
    );
    console.log(
      `append→receipt, paced ${PACED} events at ${PACED_RATE}/s, 1 endpoint: p50 ${ms(paced.p50)}, p99 ${ms(paced.p99)}`,
    );
    console.log(`raw undici POST latency, ${perEndpoint} concurrent: p50 ${ms(rawOne.p50)}, p99 ${ms(rawOne.p99)}`);
    // CPU of this process (the service; the receiver is another) per delivery: steadier than rates on a busy machine.
    console.log(
      `service CPU per delivery: 1 endpoint ${us(bulkOne.cpuUs)}, ${TEN} endpoints ${us(bulkTen.cpuUs)}; raw loop per POST ${us(rawOne.cpuUs)} (before the drain ${us(rawDrain.cpuUs)}, with dispatch ${us(dispatchDrain.cpuUs)}), signed and committed ${us(durableOne.cpuUs)}`,
    );
    console.log(
      `of which the main thread (other threads): 1 endpoint ${us(bulkOne.mainUs)} (${us(bulkOne.othersUs)}), ${TEN} endpoints ${us(bulkTen.mainUs)} (${us(bulkTen.othersUs)})`,
    );
    console.log(`the other threads, 1 endpoint: ${bulkOne.byThread}; ${TEN} endpoints: ${bulkTen.byThread}`);
    console.log(
      `service CPU per delivery, drain: ${us(drained.cpuUs)}, of which the main thread ${us(drained.mainUs)} (other threads ${us(drained.othersUs)}: ${drained.byThread})`,
    );
    // Fewer than the cores: the pipeline waits on something other than CPU (its threads' hand-offs).
    const cores = (n: number) => n.toFixed(2);
    console.log(
      `cores busy (of ${cpus().length}, the receiver's included): 1 endpoint ${cores(bulkOne.busy)}, drain ${cores(drained.busy)}, ${TEN} endpoints ${cores(bulkTen.busy)}; raw loop ${cores(rawOne.busy)}, signed and committed ${cores(durableOne.busy)}`,
    );
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
  readonly endpointIds: string[];
  readonly api: ReturnType<typeof apiClient>;
}

/** An account with one enabled endpoint per origin, subscribed to entity.created. */
async function account(
  service: { app: Parameters<typeof provisionAccount>[0]['app']; url: string },
  origins: readonly string[],
): Promise<Account> {
  const acc = await provisionAccount(service as Parameters<typeof provisionAccount>[0]);
  const api = apiClient(service.url, acc.token);
  const paths: string[] = [];
  const endpointIds: string[] = [];
  for (const [i, origin] of origins.entries()) {
    const path = `/hook/${acc.accountId.slice(-6)}/${i}`;
    const ep = await api('POST', '/external-api/v1/webhook-endpoints', {
      url: origin + path,
      event_types: ['entity.created'],
    });
    await api('POST', `/external-api/v1/webhook-endpoints/${ep.body.id}/enable`);
    paths.push(path);
    endpointIds.push(ep.body.id);
  }
  await api('PUT', '/external-api/v1/webhook-settings', { notifications_enabled: true });
  return { accountId: acc.accountId, paths, endpointIds, api };
}

/** Deliveries pending at the accounts' endpoints, by their stats. */
async function pendingAt(accounts: readonly Account[]): Promise<number> {
  let sum = 0;
  for (const acc of accounts) {
    for (const id of acc.endpointIds) {
      const stats = await acc.api('GET', `/external-api/v1/webhook-endpoints/${id}/stats`);
      sum += (stats.body as { pending: number }).pending;
    }
  }
  return sum;
}

function processorsAtHead(store: EventStore, processors: ProcessorRegistry): Promise<true> {
  return eventually(
    async () => (processors.lags(await store.headPosition()).every(([, lag]) => lag === 0) ? true : undefined),
    25,
  );
}

/**
 * Waits until the service is idle: nothing pending at the accounts' endpoints and every stream
 * processor's checkpoint at the head. A phase started before then measures the tail of the one
 * before: after the 10-endpoint burst the fan-out was still ~30,000 delivery events behind (~0.3
 * s of its work), and the paced phase's first deliveries waited behind them (p99 ~300 ms).
 */
async function settle(store: EventStore, processors: ProcessorRegistry, accounts: readonly Account[]): Promise<void> {
  await eventually(async () => ((await pendingAt(accounts)) === 0 ? true : undefined), 25);
  await processorsAtHead(store, processors);
}

/** Appends one EntityCreated of the account's (its own stream), noting when in `appendedAt`. */
function entityAppender(store: EventStore, acc: Account, appendedAt: Map<string, number>) {
  const context = { account_id: acc.accountId, actor: 'bench', correlation_id: randomUUID(), causation_id: null };
  return async () => {
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
    appendedAt.set(data.id, now());
    await store.appendToStream(`entity-${id}`, [data], { expectedRevision: 'no_stream' });
  };
}

/** Appends `events` EntityCreated (all at once, or paced at `perSecond`) and waits for every delivery. */
async function run(store: EventStore, receiver: Receiver, acc: Account, events: number, perSecond?: number) {
  // A phase set to 0 events (BENCH_WEBHOOK_*) is skipped: profiling one case alone.
  if (events === 0) return { deliveries: 0, ms: NaN, p50: NaN, p99: NaN, ...NOT_RUN };
  const appendedAt = new Map<string, number>();
  const done = receiver.expect(events * acc.paths.length);
  const started = now();
  const meter = serviceMeter();
  const appendOne = entityAppender(store, acc, appendedAt);
  if (perSecond) {
    for (let i = 0; i < events; i++) {
      const wait = started + (i * 1000) / perSecond - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void appendOne();
    }
  } else {
    await Promise.all(Array.from({ length: events }, appendOne));
  }
  await done;
  const elapsed = now() - started;
  const deliveries = events * acc.paths.length;
  const spent = meter(deliveries);
  const received = await receiver.times();
  const latencies: number[] = [];
  for (const [eventId, at] of appendedAt) {
    for (const path of acc.paths) {
      const got = received.get(`${path} ${eventId}`);
      if (got !== undefined) latencies.push(got - at);
    }
  }
  latencies.sort((a, b) => a - b);
  return { deliveries, ms: elapsed, p50: pct(latencies, 50), p99: pct(latencies, 99), ...spent };
}

/**
 * The endpoint stops answering while `events` are appended; once every delivery is scheduled
 * (its stats show them pending), it answers again: deliveries/s from then to the last receipt,
 * a backlog drained by the dispatcher alone (the clock starts once every stream processor is at
 * the head: the fan-out and the source events' read models are done). The requests held
 * meanwhile (as many as the endpoint's in-flight cap) have arrived before the clock starts: 16
 * of 20,000.
 */
async function drain(
  store: EventStore,
  processors: ProcessorRegistry,
  receiver: Receiver,
  acc: Account,
  events: number,
) {
  if (events === 0) return { deliveries: 0, ms: NaN, ...NOT_RUN };
  const deliveries = events * acc.paths.length;
  // The earlier phases' outcomes shown first, so that every delivery counted pending is this phase's.
  await settle(store, processors, [acc]);
  const done = receiver.expect(deliveries);
  receiver.hold();
  const appendOne = entityAppender(store, acc, new Map());
  await Promise.all(Array.from({ length: events }, appendOne));
  await eventually(async () => ((await pendingAt([acc])) >= deliveries ? true : undefined), 50);
  // And every stream processor at the head: the fan-out reads its own DeliveryScheduled events
  // back after the read model shows them pending (seen ~16k behind), work of the scheduling.
  await processorsAtHead(store, processors);
  const started = now();
  const meter = serviceMeter();
  receiver.release();
  await done;
  return { deliveries, ms: now() - started, ...meter(deliveries) };
}

/**
 * The same kind of request (JSON body, signature-sized headers) over the same kind of undici
 * agent (16 keep-alive connections per origin), `concurrency` at once, spread over the origins.
 */
async function rawLoop(
  receiver: Receiver,
  pki: TestPki,
  origins: readonly string[],
  count: number,
  concurrency: number,
  /** A file: each request is also signed, and its outcome recorded there durably before the next. */
  durable?: string,
  /** undici's `request` (the baseline) or its `dispatch` with a minimal handler (what the sender uses). */
  api: 'request' | 'dispatch' = 'request',
) {
  if (count === 0) return { ms: NaN, p50: NaN, p99: NaN, cpuUs: NaN, busy: NaN };
  const journal = durable === undefined ? null : new OutcomeJournal(durable);
  const key = randomBytes(32);
  const agent = new Agent({
    connections: DISPATCHER_LIMITS.perEndpoint,
    keepAliveTimeout: 30_000,
    // One secure context for every connection, as the service's sender has.
    connect: { secureContext: createSecureContext({ ca: [...rootCertificates, readFileSync(pki.caFile, 'utf8')] }) },
  });
  const body = JSON.stringify({
    event_id: randomUUID(),
    event_type: 'entity.created',
    timestamp: new Date().toISOString(),
    entity_id: randomUUID(),
    status: 'active',
  });
  const done = receiver.expect(count);
  const latencies: number[] = [];
  let next = 0;
  const started = now();
  const cpu = process.cpuUsage();
  const machine = machineTicks();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const url = `${origins[worker % origins.length]}/raw`;
      const target = new URL(url);
      while (next < count) {
        next++;
        const t0 = now();
        const id = randomUUID();
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature =
          journal === null
            ? 'x'.repeat(44)
            : createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
        const headers = {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': `v1,${signature}`,
        };
        const statusCode =
          api === 'dispatch'
            ? await dispatchPost(agent, target, headers, body)
            : await requestPost(agent, url, headers, body);
        if (journal !== null) await journal.record(id, statusCode);
        latencies.push(now() - t0);
      }
    }),
  );
  await done;
  const elapsed = now() - started;
  const cpuUs = cpuMicros(cpu) / count;
  const busy = machineBusy(machine);
  await agent.close();
  journal?.close();
  latencies.sort((a, b) => a - b);
  return { ms: elapsed, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs, busy };
}

/** One POST with undici's `request`, its body read and dropped: what a raw loop is usually written with. */
async function requestPost(agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<number> {
  const res = await request(url, { method: 'POST', dispatcher: agent, headers, body });
  await res.body.dump();
  return res.statusCode;
}

/** One POST with the agent's `dispatch` and a handler keeping the status only: no body stream, no async resource. */
function dispatchPost(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<number> {
  const { origin, pathname } = url;
  return new Promise((resolve, reject) => {
    let status = 0;
    agent.dispatch(
      { origin, path: pathname, method: 'POST', headers, body },
      {
        // Without it undici reads the handler as its older, deprecated form, and refuses it.
        onRequestStart: () => undefined,
        onResponseStart: (_c, statusCode) => (status = statusCode),
        onResponseEnd: () => resolve(status),
        onResponseError: (_c, err) => reject(err),
      },
    );
  });
}

/**
 * The durability a delivery needs, with nothing of ours: each outcome a row of the baselines'
 * event table (WAL, synchronous=FULL), the outcomes of one event-loop turn in one transaction
 * (one fsync), each request's slot waiting for its commit.
 */
class OutcomeJournal {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private pending: Array<{ id: string; status: number; committed: () => void }> = [];

  constructor(file: string) {
    ({ db: this.db, insert: this.insert } = openRawEvents(file));
  }

  record(id: string, status: number): Promise<void> {
    return new Promise((committed) => {
      if (this.pending.length === 0) setImmediate(() => this.commit());
      this.pending.push({ id, status, committed });
    });
  }

  private commit(): void {
    const batch = this.pending;
    this.pending = [];
    const created = Date.now();
    this.db.transaction(() => {
      for (const { id, status } of batch)
        this.insert.run(`delivery-${id}`, 0, id, 'DeliveryAttempted', JSON.stringify({ status }), '{}', created);
    })();
    for (const { committed } of batch) committed();
  }

  close(): void {
    this.db.close();
  }
}

/**
 * At-least-once across a crash: the service runs as a child process, is SIGKILLed while first
 * attempts and retries are in flight, and restarts on the same data. Every notification of every
 * acknowledged write still arrives (duplicates allowed, always with the same webhook-id), and
 * `audit` finds the read models the crash left behind, once caught up, equal to a rebuild. Then a
 * replay of the fan-out from scratch schedules exactly the same deliveries again: none.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { provisionAccount } from '../support/auth';
import { runCli } from '../support/cli';
import { startService } from '../support/service';
import { makeTestPki } from '../support/tls-certs';
import { startReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, fanOutCaughtUp } from '../support/webhooks';

const MAIN = join(__dirname, '../../apps/service/src/main.ts');
const V1 = '/external-api/v1';
const WRITES = 30;

describe('webhook delivery across a crash', () => {
  it('SIGKILL mid-flight, restart: every due delivery arrives, same webhook-id; a replay schedules nothing new', async () => {
    const pki = makeTestPki();
    const receiver = await startReceiver(pki);
    // Every first attempt fails, so retries are pending when the service dies.
    receiver.fallback = { status: 503 };
    const env = {
      WEBHOOK_CA_FILE: pki.caFile,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '150ms,300ms,600ms,1200ms,2400ms,4800ms',
      WEBHOOK_TIMEOUT_MS: '2000',
    };

    // Set up in-process, then hand the data directory to the child.
    const setup = await startService({ env });
    const acc = await provisionAccount(setup);
    const inProcess = apiClient(setup.url, acc.token);
    const ep = (await inProcess('POST', `${V1}/webhook-endpoints`, { url: receiver.url })).body;
    await inProcess('POST', `${V1}/webhook-endpoints/${ep.id}/enable`);
    await inProcess('PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    await setup.close();

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let child = startChild(port, setup.dataDir, env);
    const api = apiClient(base, acc.token);
    await waitReady(base);

    const created: string[] = [];
    await Promise.all(
      Array.from({ length: WRITES }, async (_, i) => {
        const res = await api('POST', `${V1}/entities`, { name: `Crash ${i}`, entity_type: 'llc' });
        if (res.status === 201) created.push(res.body.id);
      }),
    );
    expect(created).toHaveLength(WRITES);
    // Some first attempts have landed (and failed): retries are pending; others are in flight.
    await receiver.waitFor(10);
    child.kill('SIGKILL');
    await once(child, 'exit');

    receiver.fallback = { status: 200 };
    child = startChild(port, setup.dataDir, env);
    try {
      await waitReady(base);
      const delivered = await eventually(() => {
        const ok = new Set(receiver.requests.filter((r) => r.answered === 200).map((r) => r.json.entity_id as string));
        return created.every((id) => ok.has(id)) ? ok : undefined;
      });
      expect(delivered.size).toBe(WRITES);
      // One webhook-id per entity, whatever the number of attempts.
      const idsPerEntity = new Map<string, Set<string>>();
      for (const r of receiver.requests) {
        const set = idsPerEntity.get(r.json.entity_id as string) ?? new Set();
        set.add(String(r.headers['webhook-id']));
        idsPerEntity.set(r.json.entity_id as string, set);
        expect(r.headers['webhook-id']).toBe(r.json.event_id);
      }
      for (const set of idsPerEntity.values()) expect(set.size).toBe(1);
      const log = await eventually(async () => {
        const list = (await api('GET', `${V1}/webhook-endpoints/${ep.id}/deliveries?status=delivered&limit=200`)).body
          .data;
        return list.length === WRITES ? list : undefined;
      });
      expect(log).toHaveLength(WRITES);

      // Every read model (deliveries and their attempts included) equals a rebuild from the stream.
      const audit = await runCli(setup.dataDir, ['audit']);
      expect(audit.stderr).toBe('');
      expect(audit.code).toBe(0);
      expect(audit.stdout).toMatch(/read-model digest sha256:[0-9a-f]{64}/);
      expect(audit.stdout).toContain('audit passed');
      // At least the entities, their deliveries and one attempt each were compared.
      expect(Number(/audited \d+ tables, (\d+) rows/.exec(audit.stdout)?.[1])).toBeGreaterThanOrEqual(3 * WRITES);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }

    // Replay: forget the fan-out's view and checkpoint, run it again from the start of the log.
    rmSync(join(setup.dataDir, 'webhook-fanout.db'), { force: true });
    for (const suffix of ['-wal', '-shm']) rmSync(join(setup.dataDir, `webhook-fanout.db${suffix}`), { force: true });
    const again = await startService({ env, reuse: setup });
    try {
      const store = again.app.get<EventStore>(EVENT_STORE);
      const scheduledIds = async () =>
        (await store.readAll({ maxCount: 100_000 }))
          .filter((e) => e.type === 'webhooks.DeliveryScheduled')
          .map((e) => e.id);
      const before = await scheduledIds();
      expect(before).toHaveLength(WRITES);
      // The fan-out has re-read the whole log once its own checkpoint reaches the head.
      await fanOutCaughtUp(again);
      expect((await scheduledIds()).sort()).toEqual([...before].sort());
    } finally {
      await again.destroy();
      await receiver.close();
      rmSync(pki.dir, { recursive: true, force: true });
    }
  }, 90_000);
});

function startChild(port: number, dataDir: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', MAIN], {
    env: { ...process.env, ...env, PORT: String(port), DATA_DIR: dataDir, EVENT_STORE: 'sqlite', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function waitReady(base: string): Promise<void> {
  await eventually(async () => {
    try {
      const res = await fetch(`${base}/healthz`);
      return res.status === 200 ? true : undefined;
    } catch {
      return undefined;
    }
  }, 100);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Audit by replay (CONTRACT.md §6, issue 7): `replay` rebuilds every read model from 100k events
 * while the service keeps answering, and the API answers the same afterwards; `audit` passes on
 * honest read models and fails, naming the row, on a corrupted one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectionRunner } from '@filing/platform';
import { provisionAccount, type ProvisionedClient } from '../support/auth';
import { resourceApi } from '../support/api';
import { runCli } from '../support/cli';
import { generateEntityEvents } from '../support/generate-events';
import { startService, type TestService } from '../support/service';

const VOLUME = 100_000;

describe('replay and audit on a running service', () => {
  let service: TestService;
  let client: ProvisionedClient;
  const api = resourceApi(() => service);
  const ids: string[] = [];

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'replay-audit-'));
    await generateEntityEvents(dataDir, VOLUME);
    service = await startService({ reuse: { dataDir } });
    await waitUntil(async () => (await fetch(`${service.url}/readyz`)).status === 200, 120_000);
    client = await provisionAccount(service);
    for (const name of ['Acme LLC', 'Beta Corp', 'Gamma Partners']) {
      ids.push((await api.create(client, '/entities', { name, entity_type: 'llc' })).id);
    }
    const patched = await api.call(client, 'PATCH', `/entities/${ids[1]}`, { status: 'dissolved' });
    expect(patched.status).toBe(200);
  }, 180_000);
  afterAll(async () => service?.destroy());

  async function snapshot(): Promise<unknown[]> {
    const answers = [await api.call(client, 'GET', '/entities?limit=200')];
    for (const id of ids) answers.push(await api.call(client, 'GET', `/entities/${id}`));
    for (const id of ids) answers.push(await api.call(client, 'GET', `/entities/${id}/history`));
    return answers.map((a) => ({ status: a.status, etag: a.headers.etag, body: a.body }));
  }

  it('replays 100k events into a new database, swaps it in, and the API answers the same', async () => {
    const before = await snapshot();
    const runner = service.app.get(ProjectionRunner);
    const oldFile = runner.db.name;

    const replay = await runCli(service.dataDir, ['replay'], 150_000);
    expect(replay.stderr).not.toMatch(/error/i);
    expect(replay.code).toBe(0);
    const rebuilt = /from (\d+) events/.exec(replay.stdout);
    expect(Number(rebuilt?.[1])).toBeGreaterThan(VOLUME);
    expect(replay.stdout).toMatch(/replay: \d+ events, \d+ events\/s/); // plain progress lines off a terminal

    await waitUntil(async () => runner.db.name !== oldFile, 10_000);
    expect(await snapshot()).toEqual(before);
    // The swapped-in models keep following the stream.
    const late = await api.create(client, '/entities', { name: 'Delta Inc', entity_type: 'corporation' });
    expect((await api.call(client, 'GET', `/entities/${late.id}`)).status).toBe(200);
    ids.push(late.id);
  }, 180_000);

  it('audit passes on the live read models and prints their digest', async () => {
    const audit = await runCli(service.dataDir, ['audit'], 150_000);
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/read-model digest sha256:[0-9a-f]{64}/);
    expect(audit.stdout).toContain('audit passed');
  }, 180_000);

  it('audit fails on a corrupted row and names its table and key', async () => {
    const db = service.app.get(ProjectionRunner).db;
    db.prepare("UPDATE entities SET name = 'Tampered' WHERE id = ?").run(ids[0]);
    const audit = await runCli(service.dataDir, ['audit'], 150_000);
    expect(audit.code).toBe(1);
    expect(audit.stdout).toContain(`DIFF entities ["${ids[0]}"]`);
    expect(audit.stdout).toContain('"name":"Tampered"');
    expect(audit.stderr).toMatch(/audit failed: 1 rows differ/);
  }, 180_000);
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startService, type TestService } from '../support/service';

describe.each(['sqlite', 'esdb'] as const)('health endpoints on the %s store', (eventStore) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ eventStore });
  }, 60_000);
  afterAll(async () => service?.destroy());

  it('GET /healthz answers 200', async () => {
    const res = await fetch(`${service.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 with the store reachable and projections caught up', async () => {
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      details: { event_store: { status: 'up', kind: eventStore }, projections: { status: 'up' } },
    });
  });

  if (eventStore === 'esdb') {
    it('GET /readyz answers 503 naming the event store while it is down, and 200 again once it is back', async () => {
      await service.esdb!.kill('SIGKILL');
      try {
        const res = await fetch(`${service.url}/readyz`);
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({ status: 'error', error: { event_store: { status: 'down' } } });
      } finally {
        await service.esdb!.start();
      }
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await fetch(`${service.url}/readyz`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(200);
    }, 30_000);
  }
});

describe('start-up configuration', () => {
  it('refuses to start on a bad variable, naming it', () => {
    const result = spawnSync(
      process.execPath,
      ['-r', '@swc-node/register', join(__dirname, '../../apps/service/src/main.ts')],
      { env: { ...process.env, PORT: 'eighty', EVENT_STORE: 'postgres' }, encoding: 'utf8', timeout: 30_000 },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).toContain('EVENT_STORE');
  });
});

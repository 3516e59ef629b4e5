import { randomUUID } from 'node:crypto';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { startService, type TestService } from '../support/service';

describe('GET /metrics', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => service?.destroy());

  async function scrape(): Promise<string> {
    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  }

  it('times requests by route pattern and status, never by raw URL', async () => {
    await fetch(`${service.url}/healthz`);
    await fetch(`${service.url}/no/such/${randomUUID()}`);
    const text = await scrape();
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} [1-9]/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="404"\} [1-9]/);
    expect(text).not.toContain('/no/such/');
  });

  it('counts appended events by stream category', async () => {
    const store = service.app.get<EventStore>(EVENT_STORE);
    await store.appendToStream(`metricsprobe-${randomUUID()}`, [
      { id: randomUUID(), type: 'probe.Happened', data: {} },
      { id: randomUUID(), type: 'probe.Happened', data: {} },
    ]);
    expect(await scrape()).toMatch(/events_appended_total\{category="metricsprobe"\} 2/);
  });

  it('reports process metrics', async () => {
    expect(await scrape()).toContain('process_resident_memory_bytes');
  });
});

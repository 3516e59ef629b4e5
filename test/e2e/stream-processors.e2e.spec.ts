/**
 * Supervision of the stream processors, through the whole service: a transient failure restarts
 * by itself; a poison event halts only the projection that cannot apply it — loudly, in /readyz
 * and /metrics — while writes, the other read models and the webhook fan-out go on; a restart
 * after the cause is gone resumes it.
 */
import { type Projection, ProjectionRunner, RegisterProjection } from '@filing/platform';
import { Injectable, Module } from '@nestjs/common';
import Database from 'better-sqlite3';
import { bearer, provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { eventually, fanOutCaughtUp } from '../support/webhooks';

/** What the probe projection does, per entity name; the test flips it. */
const behaviour = { poison: true, busyOnce: true };

@Injectable()
@RegisterProjection()
class ProbeProjection implements Projection {
  readonly name = 'probe';
  readonly version = 1;
  readonly tables = ['probe_entities'];
  readonly handles = ['entities.EntityCreated'];
  setup(db: Database.Database): void {
    db.exec('CREATE TABLE IF NOT EXISTS probe_entities (id TEXT PRIMARY KEY, name TEXT NOT NULL)');
  }
  apply(db: Database.Database, event: { streamId: string; data: Record<string, unknown> }): void {
    const name = String(event.data.name);
    if (name === 'busy-once' && behaviour.busyOnce) {
      behaviour.busyOnce = false;
      throw new Database.SqliteError('database is locked', 'SQLITE_BUSY');
    }
    if (name === 'poison' && behaviour.poison) throw new Error('cannot handle a poison entity');
    db.prepare('INSERT INTO probe_entities (id, name) VALUES (?, ?)').run(event.streamId, name);
  }
}

@Module({ providers: [ProbeProjection] })
class ProbeProjectionModule {}

describe.each(['sqlite', 'esdb'] as const)('stream processor supervision on the %s store', (eventStore) => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    behaviour.poison = true;
    behaviour.busyOnce = true;
    service = await startService({ eventStore, imports: [ProbeProjectionModule] });
    ({ token } = await provisionAccount(service));
  }, 60_000);
  afterAll(async () => service?.destroy());

  const createEntity = async (name: string): Promise<string> => {
    const res = await fetch(`${service.url}/external-api/v1/entities`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ name, entity_type: 'llc' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const probeRows = (): string[] =>
    service.app
      .get(ProjectionRunner)
      .db.prepare<[], { name: string }>('SELECT name FROM probe_entities ORDER BY name')
      .all()
      .map((r) => r.name);
  const readyz = async () => {
    const res = await fetch(`${service.url}/readyz`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const metric = async (line: RegExp): Promise<string | undefined> => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    return text.split('\n').find((l) => line.test(l));
  };

  it('a transient failure (SQLITE_BUSY once) restarts the processor by itself; nothing is lost', async () => {
    await createEntity('busy-once');
    await eventually(() => (probeRows().includes('busy-once') ? true : undefined));
    expect(behaviour.busyOnce).toBe(false);
    expect((await readyz()).status).toBe(200);
    const restarts = await metric(/^stream_processor_restarts\{processor="projection:probe"\}/);
    expect(Number(restarts?.split(' ')[1])).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it('a poison event halts that projection alone, degraded in /readyz (still ready) and in /metrics; the rest goes on', async () => {
    await createEntity('poison');
    // A halted processor is an alert, not unreadiness: every instance would halt alike.
    const ready = await eventually(async () => {
      const r = await readyz();
      return r.status === 200 && r.body.degraded ? r : undefined;
    }, 100);
    expect(ready.body.degraded).toEqual([
      {
        processor: 'projection:probe',
        state: 'halted',
        event_type: 'entities.EntityCreated',
        stream: expect.stringMatching(/^entity-/),
        event_id: expect.any(String),
        position: expect.any(String),
        error: 'cannot handle a poison entity',
      },
    ]);
    expect(await metric(/^stream_processor_state\{processor="projection:probe",state="halted"\}/)).toMatch(/ 1$/);
    expect(await metric(/^stream_processor_state\{processor="webhook-fanout",state="running"\}/)).toMatch(/ 1$/);
    expect(await metric(/^stream_processor_state\{processor="projection:entities",state="running"\}/)).toMatch(/ 1$/);

    // Writes answer, other read models and the fan-out keep up.
    const later = await createEntity('after the poison');
    const res = await fetch(`${service.url}/external-api/v1/entities/${later}`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    await fanOutCaughtUp(service);
    expect(probeRows()).not.toContain('after the poison');
    expect(
      Number((await metric(/^stream_processor_lag_positions\{processor="projection:probe"\}/))?.split(' ')[1]),
    ).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('after the cause is fixed, a restart resumes the halted projection from its checkpoint', async () => {
    behaviour.poison = false;
    await service.close();
    service = await startService({ eventStore, imports: [ProbeProjectionModule], reuse: service });
    await eventually(async () => {
      const r = await readyz();
      return r.status === 200 && !r.body.degraded ? true : undefined;
    }, 100);
    expect(probeRows()).toEqual(expect.arrayContaining(['busy-once', 'poison', 'after the poison']));
    expect(probeRows()).toHaveLength(3);
  }, 60_000);
});

/**
 * The typed client's jurisdictions, tasks and orders operations against the real service: each
 * answer has exactly the SDK type's fields; filters, pages and the iterators; If-Match;
 * Idempotency-Key; history with the family's event names; order cancel (409 when not
 * submitted) and operator completion; references checked within the account (400 naming the field).
 */
import {
  ApiError,
  collect,
  type Entity,
  FilingClient,
  type HistoryEvent,
  type Jurisdiction,
  type Order,
  type Task,
} from '@filing/client';
import { randomUUID } from 'node:crypto';
import { provisionAccount, provisionOperator, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { keysOf, shape } from './sdk-support';

const JURISDICTION = shape<Jurisdiction>()({
  id: 1,
  entity_id: 1,
  code: 1,
  registration_type: 1,
  status: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
});
const TASK = shape<Task>()({
  id: 1,
  entity_id: 1,
  title: 1,
  description: 1,
  due_date: 1,
  status: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
});
const ORDER = shape<Order>()({
  id: 1,
  entity_id: 1,
  order_type: 1,
  jurisdiction_code: 1,
  details: 1,
  status: 1,
  cancellation_reason: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
});

describe('SDK jurisdictions, tasks and orders against the service', () => {
  let service: TestService;
  let client: FilingClient;
  let stranger: FilingClient;
  let operator: ProvisionedClient;
  let entity: Entity;
  let otherEntity: Entity;

  beforeAll(async () => {
    service = await startService();
    const a = await provisionAccount(service);
    const b = await provisionAccount(service);
    operator = await provisionOperator(service);
    client = new FilingClient({ baseUrl: service.url, clientId: a.clientId, clientSecret: a.clientSecret });
    stranger = new FilingClient({ baseUrl: service.url, clientId: b.clientId, clientSecret: b.clientSecret });
    entity = await client.entities.create({ name: 'Families LLC', entity_type: 'llc' });
    otherEntity = await client.entities.create({ name: 'Other Families LLC', entity_type: 'corporation' });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const historyTypes = (events: HistoryEvent[]) => events.map((e) => e.type);

  it('jurisdictions: create, get, update with If-Match, filters, pages, history', async () => {
    const de: Jurisdiction = await client.jurisdictions.create({
      entity_id: entity.id,
      code: 'US-DE',
      registration_type: 'domestic',
    });
    expect(keysOf(de)).toEqual(JURISDICTION);
    expect(de).toMatchObject({
      entity_id: entity.id,
      code: 'US-DE',
      registration_type: 'domestic',
      status: 'pending',
      version: 0,
    });
    const ca = await client.jurisdictions.create({ entity_id: entity.id, code: 'US-CA', registration_type: 'foreign' });
    await client.jurisdictions.create({ entity_id: otherEntity.id, code: 'US-NY', registration_type: 'foreign' });

    await expect(client.jurisdictions.get(de.id)).resolves.toEqual(de);
    const active = await client.jurisdictions.update(de.id, { status: 'active' }, { ifMatch: de.version });
    expect(keysOf(active)).toEqual(JURISDICTION);
    expect(active).toMatchObject({ status: 'active', version: 1 });
    await expect(client.jurisdictions.update(de.id, { status: 'inactive' }, { ifMatch: 0 })).rejects.toMatchObject({
      status: 412,
    });

    const mine = await collect(client.jurisdictions.listAll({ entity_id: entity.id, limit: 1 }));
    expect(mine.map((j) => j.code)).toEqual(['US-DE', 'US-CA']);
    const pending = await client.jurisdictions.list({ entity_id: entity.id, status: 'pending' });
    expect(pending).toEqual({ data: [expect.objectContaining({ id: ca.id })], next_cursor: null });

    const history = await collect(client.jurisdictions.historyAll(de.id));
    expect(historyTypes(history)).toEqual(['JurisdictionAdded', 'JurisdictionUpdated']);

    const bad = (await client.jurisdictions
      .create({ entity_id: entity.id, code: 'Delaware', registration_type: 'abroad' as never })
      .catch((e) => e)) as ApiError;
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad.status).toBe(400);
    expect(bad.errors.map((e) => e.field).sort()).toEqual(['code', 'registration_type']);
    const missing = (await client.jurisdictions
      .create({ entity_id: randomUUID(), code: 'US-DE', registration_type: 'domestic' })
      .catch((e) => e)) as ApiError;
    expect(missing).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'entity_id' })] });
  });

  it('tasks: create, complete with If-Match, filters, pages, history', async () => {
    const task: Task = await client.tasks.create({
      entity_id: entity.id,
      title: 'File annual report',
      description: 'Delaware',
      due_date: '2027-03-01',
    });
    expect(keysOf(task)).toEqual(TASK);
    expect(task).toMatchObject({
      title: 'File annual report',
      description: 'Delaware',
      due_date: '2027-03-01',
      status: 'open',
    });
    const other = await client.tasks.create({ entity_id: entity.id, title: 'Appoint agent' });
    expect(other).toMatchObject({ description: null, due_date: null });

    const done = await client.tasks.update(task.id, { status: 'completed', due_date: null }, { ifMatch: task.version });
    expect(keysOf(done)).toEqual(TASK);
    expect(done).toMatchObject({ status: 'completed', due_date: null, version: 1 });

    const open = await client.tasks.list({ entity_id: entity.id, status: 'open' });
    expect(open.data.map((t) => t.id)).toEqual([other.id]);
    expect((await collect(client.tasks.listAll({ entity_id: entity.id, limit: 1 }))).map((t) => t.id)).toEqual([
      task.id,
      other.id,
    ]);
    expect(historyTypes((await client.tasks.history(task.id)).data)).toEqual(['TaskCreated', 'TaskUpdated']);

    const foreign = (await client.tasks
      .create({
        entity_id: (await stranger.entities.create({ name: 'Theirs LLC', entity_type: 'llc' })).id,
        title: 'x',
      })
      .catch((e) => e)) as ApiError;
    expect(foreign.status).toBe(400);
    expect(foreign.fieldError('entity_id')).toEqual(expect.any(String));
    await expect(stranger.tasks.get(task.id)).rejects.toMatchObject({ status: 404 });
  });

  it('orders: submit (idempotent), cancel with a reason, 409 on a second cancel, operator completion, history', async () => {
    const key = randomUUID();
    const order: Order = await client.orders.create(
      {
        entity_id: entity.id,
        order_type: 'annual_report',
        jurisdiction_code: 'US-DE',
        details: { year: 2026, rush: false },
      },
      { idempotencyKey: key },
    );
    expect(keysOf(order)).toEqual(ORDER);
    expect(order).toMatchObject({
      status: 'submitted',
      order_type: 'annual_report',
      jurisdiction_code: 'US-DE',
      details: { year: 2026, rush: false },
      cancellation_reason: null,
    });
    await expect(
      client.orders.create(
        {
          entity_id: entity.id,
          order_type: 'annual_report',
          jurisdiction_code: 'US-DE',
          details: { year: 2026, rush: false },
        },
        { idempotencyKey: key },
      ),
    ).resolves.toEqual(order);

    const cancelled = await client.orders.cancel(order.id, { reason: 'Filed elsewhere' }, { ifMatch: order.version });
    expect(keysOf(cancelled)).toEqual(ORDER);
    expect(cancelled).toMatchObject({ status: 'cancelled', cancellation_reason: 'Filed elsewhere', version: 1 });
    const again = (await client.orders.cancel(order.id).catch((e) => e)) as ApiError;
    expect(again).toBeInstanceOf(ApiError);
    expect(again.status).toBe(409);
    expect(again.detail).toMatch(/cancelled/);

    const second = await client.orders.create({ entity_id: otherEntity.id, order_type: 'formation' });
    const res = await fetch(`${service.url}/internal-api/v1/orders/${second.id}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator.token}` },
    });
    expect(res.status).toBe(200);
    await expect(client.orders.get(second.id)).resolves.toMatchObject({ status: 'completed', jurisdiction_code: null });
    await expect(client.orders.cancel(second.id)).rejects.toMatchObject({ status: 409 });

    expect(historyTypes(await collect(client.orders.historyAll(order.id)))).toEqual([
      'OrderSubmitted',
      'OrderCancelled',
    ]);
    expect(historyTypes(await collect(client.orders.historyAll(second.id)))).toEqual([
      'OrderSubmitted',
      'OrderCompleted',
    ]);
    const history = (await client.orders.history(second.id)).data;
    expect(history[1].actor).toMatch(/^operator:/);

    const byStatus = await client.orders.list({ status: 'completed' });
    expect(byStatus.data.map((o) => o.id)).toEqual([second.id]);
    const forEntity = await collect(client.orders.listAll({ entity_id: entity.id, limit: 1 }));
    expect(forEntity.map((o) => o.id)).toEqual([order.id]);
    await expect(
      client.orders.create({ entity_id: entity.id, order_type: 'paperwork' as never }),
    ).rejects.toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'order_type' })] });
  });
});

/**
 * `npm run cli -- orders:complete ID` (CONTRACT.md §6) against a running service on the same
 * DATA_DIR: it prints the completed order as one JSON object, the service shows the completion,
 * and a refusal exits non-zero naming the status, appending nothing.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ReadYourWrites } from '@filing/platform';
import { MISSING_ID, type Resource, resourceApi } from '../support/api';
import { provisionAccount, type ProvisionedClient } from '../support/auth';
import { runCli } from '../support/cli';
import { startService, type TestService } from '../support/service';

describe('orders:complete (CLI)', () => {
  let service: TestService;
  let store: EventStore;
  let owner: ProvisionedClient;
  const { call, create } = resourceApi(() => service);

  beforeAll(async () => {
    service = await startService();
    store = service.app.get<EventStore>(EVENT_STORE);
    owner = await provisionAccount(service);
  }, 60_000);
  afterAll(async () => service?.destroy());

  const cli = (...args: string[]) => runCli(service.dataDir, args);

  const submit = async () => {
    const entity = await create(owner, '/entities', { name: 'Acme LLC', entity_type: 'llc' });
    return create<Resource>(owner, '/orders', {
      entity_id: entity.id,
      order_type: 'annual_report',
      details: { year: 2026 },
    });
  };

  it('completes a submitted order, prints it as one JSON object, and the service shows it', async () => {
    const order = await submit();
    const res = await cli('orders:complete', order.id.toUpperCase());
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const { account_id, ...view } = JSON.parse(lines[0]);
    expect(account_id).toBe(owner.accountId);
    expect(view).toEqual({ ...order, status: 'completed', updated_at: expect.any(String), version: 1 });

    // Another process's append reaches the service's read models within its poll interval.
    await service.app.get(ReadYourWrites).await(await store.headPosition());
    expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(view);
    const history = (await call(owner, 'GET', `/orders/${order.id}/history`)).body.data;
    expect(history.map((e: { type: string; actor: string }) => [e.type, e.actor])).toEqual([
      ['OrderSubmitted', `client:${owner.clientId}`],
      ['OrderCompleted', 'operator:cli'],
    ]);
  }, 60_000);

  it('refuses a completed order, an unknown one and bad arguments, appending nothing', async () => {
    const done = await submit();
    expect((await call(owner, 'POST', `/orders/${done.id}/cancel`)).status).toBe(200);
    const before = await store.headPosition();

    const [refused, unknown, none] = await Promise.all([
      cli('orders:complete', done.id),
      cli('orders:complete', MISSING_ID),
      cli('orders:complete', 'order-1', 'order-2'),
    ]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain('Cannot complete an order whose status is cancelled');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`No order with id ${MISSING_ID}`);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('orders:complete ORDER_ID');
    expect(await store.headPosition()).toEqual(before);
  }, 60_000);
});

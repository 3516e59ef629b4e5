import type { EventStore } from '@filing/event-store';
import type { CommandContext, ProjectionRunner, ReadYourWrites } from '@filing/platform';
import type { EndpointsService } from '../endpoints/endpoints.service';
import type { NotificationHistory } from '../events/notification-history';
import type { DeliveryTargets } from '../read-model/delivery-target.queries';
import { MAX_REPLAY, ReplayService } from './replay.service';

const ENDPOINT = '0193a000-0000-7000-8000-0000000000e1';
const ctx = { account_id: 'acc', actor: 'client:c', correlation_id: 'c', causation_id: null } as CommandContext;

/** A replay service whose history holds `count` matching notifications; `appends` counts what it writes. */
function service(count: number, endpoint: 'enabled' | 'disabled' = 'enabled') {
  let appends = 0;
  const store = {
    headPosition: () => Promise.resolve(null),
    appendToStream: () => {
      appends++;
      return Promise.resolve({ position: null, nextExpectedRevision: 0n });
    },
  } as unknown as EventStore;
  const endpoints = {
    get: () => ({ id: ENDPOINT, event_types: [], enabled: endpoint === 'enabled', version: 1 }),
  } as unknown as EndpointsService;
  const history = {
    count: () => ({ count, lastSeq: count }),
    page: () => [],
  } as unknown as NotificationHistory;
  const targets = {
    of: () => ({ endpoint, notificationsEnabled: true }),
  } as unknown as DeliveryTargets;
  const runner = { waitFor: () => Promise.resolve(true) } as unknown as ProjectionRunner;
  const ryw = { await: () => Promise.resolve() } as unknown as ReadYourWrites;
  const replays = new ReplayService(store, endpoints, history, targets, runner, ryw);
  return { replays, appends: () => appends };
}

describe('ReplayService', () => {
  const since = new Date('2026-11-01T00:00:00.000Z');

  it(`refuses a window of more than ${MAX_REPLAY} notifications with a 400 naming the limit, writing nothing`, async () => {
    const { replays, appends } = service(MAX_REPLAY + 1);
    await expect(replays.replay(ctx, ENDPOINT, since, new Date('2026-11-02T00:00:00.000Z'))).rejects.toMatchObject({
      name: 'ValidationError',
      message: expect.stringMatching(/until: .*100001 notifications; a replay sends at most 100000/),
    });
    await expect(replays.replay(ctx, ENDPOINT, since, null)).rejects.toMatchObject({
      message: expect.stringMatching(/^since: /),
    });
    expect(appends()).toBe(0);
  });

  it('accepts exactly the limit', async () => {
    const { replays } = service(MAX_REPLAY);
    await expect(replays.replay(ctx, ENDPOINT, since, null)).resolves.toEqual({ deliveries: 0 });
  });

  it('refuses a disabled endpoint with a 409 that says what to change, and an until not after since', async () => {
    await expect(service(1, 'disabled').replays.replay(ctx, ENDPOINT, since, null)).rejects.toMatchObject({
      name: 'ConflictError',
      message: 'The endpoint is disabled: enable it first',
    });
    await expect(service(1).replays.replay(ctx, ENDPOINT, since, since)).rejects.toMatchObject({
      message: expect.stringMatching(/^until: until must be later than since/),
    });
  });
});

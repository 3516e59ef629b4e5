import { randomBytes } from 'node:crypto';
import { FakeClock } from '../testing/fake-fetch';
import { MemoryDedupeStore } from './dedupe';
import type { WebhookEvent } from './events';
import { createWebhookHandler } from './handler';
import { signedHeaders } from './verify';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const clock = new FakeClock();
const now = () => Math.floor(clock.now() / 1000);
const event = (id: string): WebhookEvent => ({
  event_id: id,
  event_type: 'entity.created',
  timestamp: '2026-11-22T10:00:00.000Z',
  entity_id: 'e1',
  status: 'active',
  resource_version: 0,
});
const delivery = (id: string, secret = SECRET) => {
  const body = JSON.stringify(event(id));
  return [body, signedHeaders(body, id, secret, now())] as const;
};

describe('createWebhookHandler', () => {
  it('processes a delivery once, answers 200 to its duplicates, 401/400 to forged or stale ones', async () => {
    const seen: string[] = [];
    const handle = createWebhookHandler({
      secrets: [SECRET],
      store: new MemoryDedupeStore(),
      clock,
      onEvent: (e, d) => void seen.push(`${e.event_type}:${d.id}`),
    });

    const [body, headers] = delivery('evt-1');
    await expect(handle(body, headers)).resolves.toMatchObject({ outcome: 'processed', status: 200, id: 'evt-1' });
    await expect(handle(body, headers)).resolves.toMatchObject({ outcome: 'duplicate', status: 200 });
    expect(seen).toEqual(['entity.created:evt-1']);

    const forged = delivery('evt-2', `whsec_${randomBytes(32).toString('base64')}`);
    await expect(handle(...forged)).resolves.toMatchObject({ outcome: 'rejected', status: 401 });
    await expect(handle(body.replace('active', 'dissolved'), headers)).resolves.toMatchObject({
      outcome: 'rejected',
      status: 401,
    });
    const [staleBody, staleHeaders] = delivery('evt-3');
    clock.advance(301);
    await expect(handle(staleBody, staleHeaders)).resolves.toMatchObject({ outcome: 'rejected', status: 400 });
    await expect(handle(body, {})).resolves.toMatchObject({ outcome: 'rejected', status: 400 });
    expect(seen).toEqual(['entity.created:evt-1']);
  });

  it('answers 500 when the handler throws, and processes the retry', async () => {
    let fail = true;
    const seen: string[] = [];
    const handle = createWebhookHandler({
      secrets: SECRET,
      store: new MemoryDedupeStore(),
      clock,
      onEvent: (e) => {
        if (fail) throw new Error('downstream unavailable');
        seen.push(e.event_id);
      },
    });
    const [body, headers] = delivery('evt-9');
    const failed = await handle(body, headers);
    expect(failed).toMatchObject({ outcome: 'failed', status: 500 });
    fail = false;
    await expect(handle(body, headers)).resolves.toMatchObject({ outcome: 'processed', status: 200 });
    expect(seen).toEqual(['evt-9']);
  });

  it('answers 503 with Retry-After to a duplicate that arrives while the first is still processing', async () => {
    let finish!: () => void;
    const handle = createWebhookHandler({
      secrets: SECRET,
      store: new MemoryDedupeStore(),
      clock,
      onEvent: () => new Promise<void>((r) => (finish = r)),
    });
    const [body, headers] = delivery('evt-5');
    const first = handle(body, headers);
    await new Promise((r) => setImmediate(r));
    await expect(handle(body, headers)).resolves.toMatchObject({
      outcome: 'in_progress',
      status: 503,
      retryAfterSeconds: 5,
    });
    finish();
    await expect(first).resolves.toMatchObject({ outcome: 'processed' });
  });
});

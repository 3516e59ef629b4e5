import { signedHeaders } from '@filing/client';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { createReceiver } from './receiver';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('example receiver (plain HTTP)', () => {
  let server: Server;
  let url: string;
  const lines: string[] = [];

  beforeAll(async () => {
    server = createReceiver({ secrets: [SECRET], log: (l) => lines.push(l), maxBodyBytes: 1024 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const post = (body: string, headers: Record<string, string>, path = '/webhooks') =>
    fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  it('processes a signed delivery once and acknowledges its duplicate', async () => {
    const body = JSON.stringify({
      event_id: 'evt-1',
      event_type: 'task.created',
      timestamp: '2026-11-22T10:00:00.000Z',
      task_id: 't',
      entity_id: 'e',
      status: 'open',
    });
    const headers = signedHeaders(body, 'evt-1', SECRET);
    expect((await post(body, headers)).status).toBe(200);
    expect((await post(body, headers)).status).toBe(200);
    expect(lines).toEqual(['processed evt-1 task.created', 'duplicate evt-1 (already processed)']);
  });

  it('refuses forged, unsigned and oversized requests, other paths and methods', async () => {
    const body = JSON.stringify({ event_id: 'evt-2', event_type: 'entity.created' });
    const forged = signedHeaders(body, 'evt-2', `whsec_${randomBytes(32).toString('base64')}`);
    expect((await post(body, forged)).status).toBe(401);
    expect((await post(body, {})).status).toBe(400);
    expect((await post('x'.repeat(2048), signedHeaders('x', 'evt-3', SECRET))).status).toBe(413);
    expect((await post(body, signedHeaders(body, 'evt-2', SECRET), '/other')).status).toBe(404);
    const get = await fetch(`${url}/webhooks`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(lines.filter((l) => l.startsWith('rejected'))).toEqual([
      'rejected: no_matching_signature',
      'rejected: missing_header',
    ]);
  });
});

/**
 * A real HTTPS webhook receiver on 127.0.0.1 for end-to-end tests: records every request and
 * answers from a script (status, headers, or a hang), defaulting to 200.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { TestPki } from './tls-certs';

export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: Record<string, unknown>;
  readonly receivedAt: number;
  readonly path: string;
  /** The status this receiver answered with (null: it hung up without answering). */
  answered: number | null;
}

/** A status (after `delayMs`, default at once: a slow receiver), or a hang until the sender gives up. */
export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** Answers for the next requests, in order; afterwards `fallback`. */
  script(...replies: Reply[]): void;
  fallback: Reply;
  /** Resolves when `count` requests (in total) matched `predicate`. */
  waitFor(count: number, predicate?: (r: ReceivedRequest) => boolean): Promise<ReceivedRequest[]>;
  /**
   * Resolves when `count` distinct `webhook-id`s arrived, with the first request of each: what a
   * deduplicating receiver sees. Delivery is at least once, so a slow answer on a loaded machine
   * may be retried and arrive twice.
   */
  waitForEvents(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(pki: Pick<TestPki, 'cert' | 'key'>, path = '/hook'): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const queue: Reply[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<() => void>();
  const server: Server = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        /* recorded as is */
      }
      const reply = queue.shift() ?? receiver.fallback;
      const record: ReceivedRequest = {
        headers: req.headers,
        body,
        json,
        receivedAt: Date.now(),
        path: req.url ?? '',
        answered: null,
      };
      if (reply !== 'hang') record.answered = reply.status;
      requests.push(record);
      for (const w of waiters) w();
      if (reply === 'hang') {
        hanging.add(() => res.destroy());
        return;
      }
      const answer = () => {
        res.writeHead(reply.status, reply.headers ?? {});
        res.end('ok');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  /** Resolves with `select()` once it holds at least `count` requests, checked on every arrival. */
  const until = (select: () => ReceivedRequest[], count: number) =>
    new Promise<ReceivedRequest[]>((resolve) => {
      const check = () => {
        const selected = select();
        if (selected.length >= count) {
          waiters.delete(check);
          resolve(selected);
        }
      };
      waiters.add(check);
      check();
    });
  const receiver: WebhookReceiver = {
    url: `https://127.0.0.1:${port}${path}`,
    port,
    requests,
    fallback: { status: 200 },
    script: (...replies) => queue.push(...replies),
    waitFor: (count, predicate = () => true) => until(() => requests.filter(predicate), count),
    waitForEvents: (count) => until(() => firstOfEachWebhookId(requests), count),
    async close() {
      for (const h of hanging) h();
      server.closeAllConnections();
      server.close();
    },
  };
  return receiver;
}

function firstOfEachWebhookId(requests: readonly ReceivedRequest[]): ReceivedRequest[] {
  const seen = new Set<string>();
  return requests.filter((r) => {
    const id = String(r.headers['webhook-id']);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * A webhook receiver for the Filing Service that you can copy: plain Node HTTP(S), no framework.
 *
 *   1. read the raw body (the signature covers the exact bytes: never re-serialize JSON first);
 *   2. verify the Standard Webhooks signature and timestamp (4xx if it fails: the service does
 *      not retry a 4xx, and a forged request should not be retried);
 *   3. deduplicate on `webhook-id` (delivery is at least once: the same event may come twice);
 *   4. answer 2xx quickly: do slow work after answering, or in a queue of your own.
 */
import { createWebhookHandler, type DedupeStore, MemoryDedupeStore, type WebhookEvent } from '@filing/client';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

export interface ReceiverOptions {
  /** The endpoint's signing secret(s) (`whsec_…`); during a rotation, old and new. */
  readonly secrets: readonly string[];
  /** Where processed webhook-ids are remembered (default: in memory, 3 days). */
  readonly store?: DedupeStore;
  /** The path the endpoint URL points at (default `/webhooks`). */
  readonly path?: string;
  /** PEM certificate and key: serve HTTPS (the service only delivers to `https:` URLs). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** What to do with each event, once per webhook-id (default: nothing beyond the log line). */
  readonly onEvent?: (event: WebhookEvent) => Promise<void> | void;
  /** One line per request (default: console.log). Never given secrets or headers. */
  readonly log?: (line: string) => void;
  /** Largest body accepted (default 1 MiB; notifications are a few hundred bytes). */
  readonly maxBodyBytes?: number;
}

export function createReceiver(options: ReceiverOptions): Server {
  const log = options.log ?? ((line: string) => console.log(line));
  const path = options.path ?? '/webhooks';
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const handle = createWebhookHandler({
    secrets: options.secrets,
    store: options.store ?? new MemoryDedupeStore(),
    // Your work goes here (quick, or handed to a queue); the type is logged below once it succeeds.
    onEvent: options.onEvent ?? (() => undefined),
  });

  const listener = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (url.pathname !== path) return reply(res, 404);
    if (req.method !== 'POST') return reply(res, 405, { allow: 'POST' });

    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes);
    } catch {
      // Answer at once and close the connection; the rest of the body is discarded.
      req.resume();
      return reply(res, 413, { connection: 'close' });
    }
    const result = await handle(body, req.headers);
    switch (result.outcome) {
      case 'processed':
        log(`processed ${result.id} ${result.event.event_type}`);
        return reply(res, 200);
      case 'duplicate':
        log(`duplicate ${result.id} (already processed)`);
        return reply(res, 200);
      case 'in_progress':
        return reply(res, 503, { 'retry-after': String(result.retryAfterSeconds) });
      case 'rejected':
        log(`rejected: ${result.error.reason}`);
        return reply(res, result.status);
      case 'failed':
        log(`failed ${result.id}: ${result.error instanceof Error ? result.error.message : String(result.error)}`);
        return reply(res, 500);
    }
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    listener(req, res).catch(() => reply(res, 500));
  };
  return options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createHttpServer(handler);
}

function reply(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(status < 300 ? 'ok' : '');
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        reject(new Error('body too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

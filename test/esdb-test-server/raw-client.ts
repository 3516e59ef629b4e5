/**
 * Helpers for the specs that drive the test server with the raw @eventstore/db-client (not our
 * adapter): what the client sees is what a real server would show it.
 */
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent, type AllStreamResolvedEvent, type ResolvedEvent } from '@eventstore/db-client';
import { startEsdbTestServer, type EsdbTestServer, type EsdbTestServerOptions } from './harness';

/**
 * A test server and a raw client for the whole spec file: started in beforeAll, stopped in
 * afterAll; read `server` and `client` inside tests.
 */
export function serverAndClient(): { readonly server: EsdbTestServer; readonly client: EventStoreDBClient } {
  let server: EsdbTestServer | undefined;
  let client: EventStoreDBClient | undefined;
  beforeAll(async () => {
    server = await startEsdbTestServer();
    client = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterAll(async () => {
    await client?.dispose();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('serverAndClient(): used before beforeAll ran');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get client() {
      return started(client);
    },
  };
}

/**
 * A server of its own for one test (another configuration, a fresh log), with a raw client;
 * `query` is added to the connection string (e.g. `&throwOnAppendFailure=false`).
 */
export async function withOwnServer<T>(
  options: EsdbTestServerOptions,
  use: (server: EsdbTestServer, client: EventStoreDBClient) => Promise<T>,
  query = '',
): Promise<T> {
  const server = await startEsdbTestServer(options);
  const client = EventStoreDBClient.connectionString(`${server.connectionString}${query}`);
  try {
    return await use(server, client);
  } finally {
    await client.dispose();
    await server.stop();
  }
}

export const stream = () => `wire-${randomUUID()}`;
/** A unique event-type prefix, so one server can serve a whole spec file. */
export const prefix = () => `w${randomUUID().replace(/-/g, '').slice(0, 10)}.`;
export const event = (type: string, data: Record<string, unknown> = {}, metadata?: Record<string, unknown>) =>
  jsonEvent({ type, data, ...(metadata && { metadata }) });
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function readStream(
  client: EventStoreDBClient,
  name: string,
  options: Parameters<EventStoreDBClient['readStream']>[1] = {},
) {
  const out: NonNullable<ResolvedEvent['event']>[] = [];
  for await (const r of client.readStream(name, options)) if (r.event) out.push(r.event);
  return out;
}

export async function readAll(client: EventStoreDBClient, options: Parameters<EventStoreDBClient['readAll']>[0] = {}) {
  const out: NonNullable<AllStreamResolvedEvent['event']>[] = [];
  for await (const r of client.readAll(options)) if (r.event) out.push(r.event);
  return out;
}

/** Collects a subscription's events and caught-up signal in arrival order. */
export function record(sub: NodeJS.EventEmitter & AsyncIterable<ResolvedEvent>) {
  const log: string[] = [];
  const events: NonNullable<ResolvedEvent['event']>[] = [];
  let failure: Error | undefined;
  sub.on('caughtUp', () => log.push('caught-up'));
  sub.on('error', (err: Error) => (failure = err));
  sub.on('data', (r: ResolvedEvent) => {
    if (!r.event) return;
    events.push(r.event);
    log.push(r.event.type);
  });
  return {
    log,
    events,
    get failure() {
      return failure;
    },
    async until(predicate: () => boolean, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (failure) throw failure;
        if (Date.now() > deadline) throw new Error(`Timed out; got ${JSON.stringify(log)}`);
        await sleep(10);
      }
    },
  };
}

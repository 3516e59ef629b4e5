/** Helpers for the webhook end-to-end tests: a JSON API client and polling without timed assertions. */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { bearer } from './auth';
import { provisionAccount } from './auth';
import type { TestService } from './service';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export type Api = <T = any>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<ApiResponse<T>>;

/** Calls `{base}{path}` with the token; a body is sent as JSON. */
export function apiClient(baseUrl: string, token: string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...bearer(token), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };
}

/**
 * Polls until `check` returns a value (not undefined); the Jest timeout bounds the test, and
 * `timeoutMs` the polling itself (else it goes on after a timed-out test, keeping Jest alive).
 */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  intervalMs = 25,
  timeoutMs = Infinity,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The fan-out's persisted checkpoint (the commit position it has decided up to), read from its own database. */
export function fanOutCheckpoint(dataDir: string): { commit(): bigint | null; close(): void } {
  const db = new Database(join(dataDir, 'webhook-fanout.db'), { readonly: true, fileMustExist: true });
  const read = db.prepare<[], { position: string }>(
    "SELECT position FROM webhook_fanout_checkpoint WHERE name = 'fanout'",
  );
  return {
    commit: () => {
      const row = read.get();
      return row ? BigInt(row.position.split('/')[0]) : null;
    },
    close: () => db.close(),
  };
}

/** Resolves once the fan-out's persisted checkpoint has reached the head of the log as it is now. */
export async function fanOutCaughtUp(service: TestService): Promise<void> {
  const head = await service.app.get<EventStore>(EVENT_STORE).headPosition();
  if (head === null) return;
  const checkpoint = fanOutCheckpoint(service.dataDir);
  try {
    await eventually(() => {
      const commit = checkpoint.commit();
      return commit !== null && commit >= head.commit ? true : undefined;
    });
  } finally {
    checkpoint.close();
  }
}

export interface EndpointSpec {
  readonly url: string;
  readonly event_types?: string[];
  readonly rate_limit_per_second?: number;
}

/** A new account, the switch on, one enabled endpoint per spec; its API and the endpoints (with their secrets). */
export async function accountWithEndpoints(
  service: TestService,
  specs: readonly EndpointSpec[],
): Promise<{ api: Api; accountId: string; endpoints: Array<{ id: string; secret: string }> }> {
  const acc = await provisionAccount(service);
  const api = apiClient(service.url, acc.token);
  const endpoints: Array<{ id: string; secret: string }> = [];
  for (const spec of specs) {
    const res = await api('POST', '/external-api/v1/webhook-endpoints', spec);
    expect(res.status).toBe(201);
    expect((await api('POST', `/external-api/v1/webhook-endpoints/${res.body.id}/enable`)).status).toBe(200);
    endpoints.push(res.body);
  }
  expect((await api('PUT', '/external-api/v1/webhook-settings', { notifications_enabled: true })).status).toBe(200);
  return { api, accountId: acc.accountId, endpoints };
}

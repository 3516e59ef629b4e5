/**
 * Helpers for the resource families' end-to-end specs (CONTRACT.md §2–§3): one request over real
 * HTTP, walking a collection's pages, checking a problem+json answer, and the table of bad inputs
 * every write and list route must refuse with a 4xx problem and no event appended.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { bearer, type ProvisionedClient } from './auth';
import type { TestService } from './service';

export const PROBLEM = 'application/problem+json; charset=utf-8';
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A well-formed id that names nothing. */
export const MISSING_ID = '0193a5b2-0000-7000-8000-000000000000';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: any;
}

/** What every resource answers with. */
export interface Resource {
  readonly id: string;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly [field: string]: unknown;
}

/** Plain functions (no `this`), so specs can destructure them. */
export interface ResourceApi {
  /** One request to `/external-api/v1<path>`; `body` is sent as JSON unless it is a string (sent as is). */
  call: (
    client: ProvisionedClient,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<Answer>;
  /** POST that must answer 201; the created resource. */
  create: <T = Resource>(client: ProvisionedClient, path: string, body: Record<string, unknown>) => Promise<T>;
  /** Every page of a collection, following next_cursor. */
  walk: <T>(client: ProvisionedClient, path: string, limit: number) => Promise<{ items: T[]; pages: number }>;
}

/** `service` is read at each call, so the API can be made before `beforeAll` starts the service. */
export function resourceApi(service: () => TestService): ResourceApi {
  async function call(
    client: ProvisionedClient,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const raw = typeof body === 'string' || body === undefined;
    const res = await fetch(`${service().url}/external-api/v1${path}`, {
      method,
      headers: { ...bearer(client.token), ...(raw ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
  }

  async function create<T>(client: ProvisionedClient, path: string, body: Record<string, unknown>): Promise<T> {
    const res = await call(client, 'POST', path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as T;
  }

  async function walk<T>(
    client: ProvisionedClient,
    path: string,
    limit: number,
  ): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res = await call(client, 'GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 50);
    return { items, pages };
  }

  return { call, create: create, walk };
}

/** A problem+json answer with this status and, when given, exactly these fields in `errors`. */
export function expectProblem(res: Answer, status: number, fields?: string[]): void {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({ status, type: PROBLEM });
  expect(res.body).toMatchObject({
    type: 'about:blank',
    status,
    title: expect.any(String),
    detail: expect.any(String),
  });
  if (fields) expect((res.body.errors ?? []).map((e: { field: string }) => e.field).sort()).toEqual([...fields].sort());
}

/** One row of a bad-input table: the request, the status it must get and the fields it must name. */
export type BadInput = [
  label: string,
  method: string,
  path: () => string,
  body: unknown,
  headers: Record<string, string>,
  status: number,
  fields?: string[],
];

const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * The bad inputs every family's routes share (body framing, content types, ids, pagination,
 * headers), for a collection at `path` whose POST accepts `valid` and whose `/{id}` PATCH and
 * history exist; `id()` names an existing resource. Each family adds its field rules.
 */
export function commonBadInputs(path: string, valid: Record<string, unknown>, id: () => string): BadInput[] {
  const [firstField] = Object.keys(valid);
  return [
    ['malformed JSON', 'POST', () => path, `{"${firstField}": `, JSON_TYPE, 400],
    ['a JSON array', 'POST', () => path, [valid], {}, 400],
    ['JSON null', 'POST', () => path, 'null', JSON_TYPE, 400],
    ['a JSON string', 'POST', () => path, '"Acme"', JSON_TYPE, 400],
    [
      'prototype pollution',
      'POST',
      () => path,
      `${JSON.stringify(valid).slice(0, -1)},"__proto__":{"admin":true}}`,
      JSON_TYPE,
      400,
    ],
    // 2,000 levels in 4 KB used to overflow the stack while validating: a 500.
    [
      'JSON nested 2,000 deep',
      'POST',
      () => path,
      `{"${firstField}":${'['.repeat(2000)}${']'.repeat(2000)}}`,
      JSON_TYPE,
      400,
    ],
    [
      'a number beyond double range',
      'POST',
      () => path,
      `${JSON.stringify(valid).slice(0, -1)},"n":1e400}`,
      JSON_TYPE,
      400,
    ],
    [
      'a body over 15 MiB',
      'POST',
      () => path,
      JSON.stringify({ ...valid, [firstField]: 'x'.repeat(16 * 1024 * 1024) }),
      JSON_TYPE,
      413,
    ],
    ['text/plain', 'POST', () => path, 'name=Acme', { 'content-type': 'text/plain' }, 415],
    ['a form body', 'POST', () => path, 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' }, 415],
    ['XML', 'POST', () => path, '<resource/>', { 'content-type': 'application/xml' }, 415],
    [
      'a bad Idempotency-Key',
      'POST',
      () => path,
      valid,
      { 'idempotency-key': 'k'.repeat(300) },
      400,
      ['Idempotency-Key'],
    ],
    ['PATCH malformed JSON', 'PATCH', () => `${path}/${id()}`, '{', JSON_TYPE, 400],
    ['PATCH text/plain', 'PATCH', () => `${path}/${id()}`, 'name', { 'content-type': 'text/plain' }, 415],
    [
      'PATCH JSON nested 2,000 deep',
      'PATCH',
      () => `${path}/${id()}`,
      `{"x":${'{"y":'.repeat(2000)}1${'}'.repeat(2000)}}`,
      JSON_TYPE,
      400,
    ],
    ['PATCH a JSON array', 'PATCH', () => `${path}/${id()}`, [], {}, 400],
    ['PATCH a bad UUID', 'PATCH', () => `${path}/123`, {}, {}, 400, ['id']],
    ['PATCH a malformed If-Match', 'PATCH', () => `${path}/${id()}`, {}, { 'if-match': 'zero' }, 400, ['If-Match']],
    ['GET a bad UUID', 'GET', () => `${path}/0193a5b2`, undefined, {}, 400, ['id']],
    ['list a bad limit', 'GET', () => `${path}?limit=1000`, undefined, {}, 400, ['limit']],
    ['list a zero limit', 'GET', () => `${path}?limit=0`, undefined, {}, 400, ['limit']],
    ['list a bad cursor', 'GET', () => `${path}?cursor=%7B%7D`, undefined, {}, 400, ['cursor']],
    ['list a repeated limit', 'GET', () => `${path}?limit=1&limit=2`, undefined, {}, 400, ['limit']],
    ['list an unknown parameter', 'GET', () => `${path}?color=red`, undefined, {}, 400, ['color']],
    ['GET one with a query parameter', 'GET', () => `${path}/${id()}?expand=all`, undefined, {}, 400, ['expand']],
    ['PATCH with a query parameter', 'PATCH', () => `${path}/${id()}?dry_run=1`, {}, {}, 400, ['dry_run']],
    ['history a bad cursor', 'GET', () => `${path}/${id()}/history?cursor=AAAA`, undefined, {}, 400, ['cursor']],
    ['history a bad limit', 'GET', () => `${path}/${id()}/history?limit=201`, undefined, {}, 400, ['limit']],
    ['history a bad UUID', 'GET', () => `${path}/x/history`, undefined, {}, 400, ['id']],
  ];
}

/**
 * Sends every row as `client`: each must be a 4xx problem with its status and fields, and the
 * store's head must not move (nothing appended). Failures are collected so one run lists them all.
 */
export async function expectRefusedWithoutEvents(
  service: TestService,
  api: ResourceApi,
  client: ProvisionedClient,
  cases: readonly BadInput[],
): Promise<void> {
  const store = service.app.get<EventStore>(EVENT_STORE);
  const before = await store.headPosition();
  const failures: string[] = [];
  for (const [label, method, path, body, headers, status, fields] of cases) {
    const res = await api.call(client, method, path(), body, headers);
    try {
      expect(res.status).toBeLessThan(500);
      expectProblem(res, status, fields);
    } catch (err) {
      failures.push(`${label}: ${res.status} ${JSON.stringify(res.body)}\n${(err as Error).message}`);
    }
  }
  expect(failures).toEqual([]);
  expect(await store.headPosition()).toEqual(before);
}

import {
  Body,
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Global,
  Injectable,
  Logger,
  Module,
  Param,
  Post,
  Res,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsOptional, IsString } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_STORE, type EventStore, SqliteEventStore } from '@filing/event-store';
import { ConflictError, ValidationError } from '../errors/domain-errors';
import { IfMatch } from './etag';
import { RedactOnReplay, SkipIdempotency } from './idempotency.guard';
import { type IdempotencyClaim, IdempotencyStore, idempotencyStream, type Reservation } from './idempotency.store';
import { PROBLEM_CONTENT_TYPE, ProblemDetailsFilter } from './problem-details.filter';
import { setPrincipal } from './principal';
import { ReadYourWrites } from './read-your-writes';
import { ResourceApiModule } from './resource-api.module';
import { ResourceIdPipe } from './resource-id.pipe';
import { createValidationPipe } from './validation.pipe';

class ThingDto {
  @IsString()
  name!: string;

  @IsOptional()
  @IsString()
  note?: string;
}

let runs = 0;
let gate: Promise<void> | null = null;

@Controller()
class ThingsController {
  @Post('external-api/v1/things')
  async create(@Body() dto: ThingDto, @Res({ passthrough: true }) reply: FastifyReply) {
    runs++;
    if (gate) await gate;
    if (dto.name === 'boom') throw new TypeError('bug');
    if (dto.name === 'bad') throw ValidationError.field('name', 'name is not allowed');
    if (dto.name === 'taken') throw new ConflictError('name is taken');
    const id = `thing-${runs}`;
    reply.header('location', `/external-api/v1/things/${id}`).header('etag', '"0"');
    return { id, name: dto.name, run: runs };
  }

  @Post('external-api/v1/credentials')
  @SkipIdempotency()
  credential() {
    runs++;
    return { secret: `s-${runs}` };
  }

  @Post('external-api/v1/endpoints')
  @RedactOnReplay('secret')
  endpoint() {
    runs++;
    return { id: `endpoint-${runs}`, secret: `whsec_secret-of-run-${runs}` };
  }

  @Post('other/things')
  other(@Body() dto: ThingDto) {
    runs++;
    return { run: runs, name: dto.name };
  }

  @Get('external-api/v1/things/:id')
  get(@Param('id', ResourceIdPipe) id: string, @IfMatch() ifMatch: bigint | undefined) {
    return { id, if_match: ifMatch === undefined ? null : String(ifMatch) };
  }
}

/** Stands in for the auth guard: the account comes from a test header. */
@Injectable()
class TestAuthGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    const request = ctx.switchToHttp().getRequest();
    const account = request.headers['x-account'];
    if (account)
      setPrincipal(request, { kind: 'client', accountId: account, subjectId: 'c1', scopes: ['read', 'write'] });
    return true;
  }
}

/** What the app's global modules provide to ResourceApiModule: an event store (the keys live there), a stub for the rest. */
function storeModule(store: EventStore) {
  @Global()
  @Module({
    providers: [
      { provide: ReadYourWrites, useValue: {} },
      { provide: EVENT_STORE, useValue: store },
    ],
    exports: [ReadYourWrites, EVENT_STORE],
  })
  class StoreModule {}
  return StoreModule;
}

/** One service instance: the interceptors over real HTTP, on `store`. */
async function startInstance(store: EventStore, dir: string): Promise<{ app: NestFastifyApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      storeModule(store),
      ResourceApiModule.forRoot({ cursorKeyFile: join(dir, 'cursor.key'), idempotencyInFlightWaitMs: 300 }),
    ],
    controllers: [ThingsController],
    providers: [
      { provide: APP_GUARD, useClass: TestAuthGuard },
      { provide: APP_FILTER, useClass: ProblemDetailsFilter },
    ],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(createValidationPipe());
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

describe('Idempotency-Key and JSON-only bodies (interceptors over real HTTP)', () => {
  let app: NestFastifyApplication;
  let url: string;
  let dir: string;
  let store: SqliteEventStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
    ({ app, url } = await startInstance(store, dir));
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    runs = 0;
    gate = null;
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  let n = 0;
  const newKey = () => `key-${++n}-${Date.now()}`;

  async function post(body: unknown, headers: Record<string, string> = {}, path = '/external-api/v1/things') {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-account': 'acc-1', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), text, body: text ? JSON.parse(text) : null };
  }

  it('replays the first answer (status, Location, ETag, body) for the same key and body', async () => {
    const key = newKey();
    const first = await post({ name: 'a' }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post({ name: 'a' }, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers).toMatchObject({
      location: first.headers.location,
      etag: '"0"',
      'content-type': first.headers['content-type'],
      'idempotent-replayed': 'true',
    });
    expect(runs).toBe(1);
  });

  it('treats the same JSON in another key order as the same body', async () => {
    const key = newKey();
    await post('{"name":"a","note":"n"}', { 'idempotency-key': key });
    const again = await post('{ "note": "n", "name": "a" }', { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(runs).toBe(1);
  });

  it('answers 422 for the same key with another body, and runs nothing', async () => {
    const key = newKey();
    await post({ name: 'a' }, { 'idempotency-key': key });
    const other = await post({ name: 'b' }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    expect(other.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
    expect(other.body.detail).toMatch(/Idempotency-Key/);
    expect(runs).toBe(1);
  });

  it('scopes keys by account', async () => {
    const key = newKey();
    await post({ name: 'a' }, { 'idempotency-key': key });
    const other = await post({ name: 'b' }, { 'idempotency-key': key, 'x-account': 'acc-2' });
    expect(other.status).toBe(201);
    expect(runs).toBe(2);
  });

  it('answers 409 while the first request with the key is in flight, then replays it', async () => {
    const key = newKey();
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const first = post({ name: 'a' }, { 'idempotency-key': key });
    while (runs === 0) await new Promise((r) => setImmediate(r));
    const concurrent = await post({ name: 'a' }, { 'idempotency-key': key });
    expect(concurrent.status).toBe(409);
    expect(concurrent.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
    open();
    expect((await first).status).toBe(201);
    const after = await post({ name: 'a' }, { 'idempotency-key': key });
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(runs).toBe(1);
  });

  it('never caches a 5xx: a retry runs again', async () => {
    const key = newKey();
    expect((await post({ name: 'boom' }, { 'idempotency-key': key })).status).toBe(500);
    expect((await post({ name: 'boom' }, { 'idempotency-key': key })).status).toBe(500);
    expect(runs).toBe(2);
  });

  it('caches a final 4xx problem answer (the request ran and was refused) and replays it', async () => {
    const key = newKey();
    const first = await post({ name: 'taken' }, { 'idempotency-key': key });
    expect(first.status).toBe(409);
    const again = await post({ name: 'taken' }, { 'idempotency-key': key });
    expect(again.status).toBe(409);
    expect(again.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
    expect(again.body).toEqual(first.body);
    expect(runs).toBe(1);
  });

  it('does not keep a 400: the corrected request may use the same key', async () => {
    const key = newKey();
    expect((await post({ name: 'bad' }, { 'idempotency-key': key })).status).toBe(400);
    expect((await post({ name: 42 }, { 'idempotency-key': key })).status).toBe(400);
    const fixed = await post({ name: 'good' }, { 'idempotency-key': key });
    expect([fixed.status, fixed.body.name]).toEqual([201, 'good']);
    expect((await post({ name: 'good' }, { 'idempotency-key': key })).headers['idempotent-replayed']).toBe('true');
  });

  it('stores an answer without its @RedactOnReplay fields: the replay has the rest, the key store no secret', async () => {
    const key = newKey();
    const first = await post({}, { 'idempotency-key': key }, '/external-api/v1/endpoints');
    expect(first.body).toEqual({ id: 'endpoint-1', secret: 'whsec_secret-of-run-1' });
    const again = await post({}, { 'idempotency-key': key }, '/external-api/v1/endpoints');
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([
      201,
      'true',
      { id: 'endpoint-1' },
    ]);
    expect(runs).toBe(1);
    for (const file of readdirSync(dir))
      expect(readFileSync(join(dir, file)).includes('whsec_secret-of-run-1')).toBe(false);
  });

  it('refuses a malformed key with a 400 naming Idempotency-Key', async () => {
    const res = await post({ name: 'a' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    expect(runs).toBe(0);
  });

  it('leaves POSTs without a key, and POSTs outside the API prefixes, alone', async () => {
    await post({ name: 'a' });
    await post({ name: 'a' });
    const key = newKey();
    await post({ name: 'a' }, { 'idempotency-key': key }, '/other/things');
    await post({ name: 'a' }, { 'idempotency-key': key }, '/other/things');
    expect(runs).toBe(4);
  });

  it('ignores the key on a route whose answer must not be stored (@SkipIdempotency)', async () => {
    const key = newKey();
    const first = await post({}, { 'idempotency-key': key }, '/external-api/v1/credentials');
    const second = await post({}, { 'idempotency-key': key }, '/external-api/v1/credentials');
    expect([first.body.secret, second.body.secret]).toEqual(['s-1', 's-2']);
  });

  it('refuses a form body on an API route with 415 before reserving its key', async () => {
    const key = newKey();
    const res = await fetch(`${url}/external-api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-account': 'acc-1', 'idempotency-key': key },
      body: 'name=a',
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
    expect((await post({ name: 'a' }, { 'idempotency-key': key })).status).toBe(201);
    expect(runs).toBe(1);
    // No body, no media type to refuse.
    const get = await fetch(`${url}/external-api/v1/things/0193a5b2-0000-7000-8000-000000000001`, {
      headers: { 'content-type': 'text/plain' },
    });
    expect(get.status).toBe(200);
  });

  it('@Param(ResourceIdPipe) answers 400 naming the parameter; @IfMatch() parses the header', async () => {
    const bad = await fetch(`${url}/external-api/v1/things/nope`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: unknown }).errors).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
    const id = '0193A5B2-0000-7000-8000-000000000001';
    const ok = await fetch(`${url}/external-api/v1/things/${id}`, { headers: { 'if-match': 'W/"4"' } });
    expect(await ok.json()).toEqual({ id: id.toLowerCase(), if_match: '4' });
    const stale = await fetch(`${url}/external-api/v1/things/${id}`, { headers: { 'if-match': '"x"' } });
    expect(stale.status).toBe(412);
  });
});

describe('Idempotency-Key across instances on one event store', () => {
  let dir: string;
  let store: SqliteEventStore;
  let instances: Array<{ app: NestFastifyApplication; url: string }>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-two-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
    // The race below is timed (300 ms in-flight wait): the writer thread is up before it starts.
    await store.ready();
    instances = [await startInstance(store, dir), await startInstance(store, dir)];
  });
  afterAll(async () => {
    for (const { app } of instances) await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    runs = 0;
    gate = null;
  });

  const post = async (url: string, key: string, name = 'a') => {
    const res = await fetch(`${url}/external-api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-account': 'acc-race', 'idempotency-key': key },
      body: JSON.stringify({ name }),
    });
    return {
      status: res.status,
      replayed: res.headers.get('idempotent-replayed'),
      location: res.headers.get('location'),
      text: await res.text(),
    };
  };

  it('the same key sent to two instances at once runs once, and both get the same answer', async () => {
    for (let round = 0; round < 10; round++) {
      runs = 0;
      const key = `race-${round}-${Date.now()}`;
      const [a, b] = await Promise.all(instances.map(({ url }) => post(url, key)));
      expect(runs).toBe(1);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.text).toBe(a.text);
      expect(b.location).toBe(a.location);
      expect(new Set([a.replayed, b.replayed])).toEqual(new Set(['true', null])); // one ran, one replayed
    }
  });

  it('a retry on the other instance replays; another body there is a 422', async () => {
    const key = `retry-${Date.now()}`;
    const first = await post(instances[0].url, key);
    const again = await post(instances[1].url, key);
    expect([again.status, again.replayed, again.text]).toEqual([201, 'true', first.text]);
    expect((await post(instances[1].url, key, 'b')).status).toBe(422);
    expect(runs).toBe(1);
  });
});

describe('IdempotencyStore', () => {
  const context = { account_id: 'acc', actor: 'client:c1', correlation_id: 'r1', causation_id: null };
  const response = { status: 201, headers: { etag: '"0"' }, body: '{"id":"x"}' };
  let dir: string;
  let events: SqliteEventStore;
  let now: number;
  const storeOf = () => new IdempotencyStore({ store: events, ttlMs: 10_000, leaseMs: 1_000, now: () => now });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-store-'));
    events = new SqliteEventStore({ file: join(dir, 'events.db') });
    now = Date.now();
  });
  afterEach(async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reserved = (r: Reservation): IdempotencyClaim => {
    if (r.kind !== 'reserved') throw new Error(`expected the key to be free, got ${r.kind}`);
    return r.claim;
  };

  it('replays a recorded answer until the TTL, then the key is new again; the stream asks the store to drop it after the TTL', async () => {
    const store = storeOf();
    const claim = reserved(await store.reserve('a', 'k', 'f1', context));
    await store.complete(claim, response);
    expect(await store.reserve('a', 'k', 'f1', context)).toEqual({ kind: 'replay', response });
    expect(await store.reserve('a', 'k', 'f2', context)).toEqual({ kind: 'mismatch' });
    expect(await events.getStreamMetadata(idempotencyStream('a', 'k'))).toEqual({ maxAge: 10 });
    now += 10_000;
    reserved(await store.reserve('a', 'k', 'f2', context)); // expired: a first use with another body
    expect((await store.reserve('a', 'k', 'f2', context)).kind).toBe('in-flight');
  });

  it('a key whose old events the store already hides (past $maxAge) is claimed after them, by one store of many', async () => {
    const store = storeOf();
    await store.complete(reserved(await store.reserve('a', 'k', 'f1', context)), response);
    const streamId = idempotencyStream('a', 'k');
    // What $maxAge does once the events are old, without waiting a day: stream reads show nothing.
    await events.setStreamMetadata(streamId, { truncateBefore: 2n });
    expect(await events.readStream(streamId)).toEqual([]);
    const outcomes = await Promise.all(
      [storeOf(), storeOf(), storeOf()].map((s) => s.reserve('a', 'k', 'f2', context)),
    );
    expect(outcomes.filter((o) => o.kind === 'reserved').map((o) => reserved(o).revision)).toEqual([2n]);
    expect(outcomes.filter((o) => o.kind === 'in-flight')).toHaveLength(2);
  });

  it('a released key (an answer not kept) may be claimed again at once', async () => {
    const store = storeOf();
    await store.release(reserved(await store.reserve('a', 'k', 'f1', context)));
    await store.complete(reserved(await store.reserve('a', 'k', 'f2', context)), response);
    expect(await store.reserve('a', 'k', 'f2', context)).toEqual({ kind: 'replay', response });
  });

  it('a claim left without an answer (its instance died) is taken over after its lease; the late answer of the old holder is not kept', async () => {
    const store = storeOf();
    const abandoned = reserved(await store.reserve('a', 'k', 'f1', context));
    now += 999;
    expect((await store.reserve('a', 'k', 'f1', context)).kind).toBe('in-flight');
    now += 1;
    const taken = reserved(await store.reserve('a', 'k', 'f1', context));
    await store.complete(abandoned, { ...response, body: 'late' });
    await store.complete(taken, response);
    expect(await store.reserve('a', 'k', 'f1', context)).toEqual({ kind: 'replay', response });
  });

  it('of many stores racing one key exactly one claims it; the others see it in flight, then replay its answer', async () => {
    const stores = Array.from({ length: 8 }, storeOf);
    const outcomes = await Promise.all(stores.map((s) => s.reserve('a', 'race', 'f', context)));
    const winners = outcomes.filter((o) => o.kind === 'reserved');
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'in-flight')).toHaveLength(7);
    const waiting = stores.map((s) => s.reserve('a', 'race', 'f', context, 5_000));
    await stores[0].complete(reserved(winners[0]), response);
    for (const outcome of await Promise.all(waiting)) expect(outcome).toEqual({ kind: 'replay', response });
  });

  it('keys are per scope, and a key holding any characters names a fixed-length stream', async () => {
    const store = storeOf();
    reserved(await store.reserve('a', 'k', 'f', context));
    reserved(await store.reserve('b', 'k', 'f', context));
    expect(idempotencyStream('a', '~'.repeat(255))).toMatch(/^idempotency-[0-9a-f]{64}$/);
    expect(idempotencyStream('a|b', 'c')).not.toBe(idempotencyStream('a', 'b|c'));
  });
});

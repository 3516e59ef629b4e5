import {
  type ArgumentsHost,
  type CallHandler,
  Catch,
  Controller,
  type ExceptionFilter,
  type ExecutionContext,
  type NestInterceptor,
  Post,
  Res,
  UseFilters,
  UseInterceptors,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_STORE, SqliteEventStore } from '@filing/event-store';
import { ProblemDetailsFilter } from './problem-details.filter';
import { setPrincipal } from './principal';
import { ReadYourWrites } from './read-your-writes';
import { ResourceApiModule } from './resource-api.module';

let handled = 0;
let intercepted = 0;
let release: (() => void) | null = null;

/** A route's own catch-all filter: it must not take a replay for an error. */
@Catch()
class OwnFilter implements ExceptionFilter {
  catch(_: unknown, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<FastifyReply>().status(599).send('own filter');
  }
}

/** A route's own interceptor, which also stands in for authentication (the principal). */
class OwnInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    intercepted++;
    return next.handle();
  }
}

@Controller('external-api/v1/slow')
@UseFilters(OwnFilter)
class SlowController {
  @Post()
  @UseInterceptors(OwnInterceptor)
  async create(@Res({ passthrough: true }) reply: FastifyReply) {
    const n = ++handled;
    if (release === null) await new Promise<void>((resolve) => (release = resolve));
    reply.header('x-run', String(n));
    return { n };
  }
}

/** The app: ResourceApiModule over a store in `dir`, the global filter, and the controller above. */
async function startApp(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const store = new SqliteEventStore({ file: join(dir, 'events.db') });
  // What the app's global modules give ResourceApiModule: the store (its keys live there), a stub.
  const given = [
    { provide: EVENT_STORE, useValue: store },
    { provide: ReadYourWrites, useValue: {} },
  ];
  const moduleRef = await Test.createTestingModule({
    imports: [
      { module: class Given {}, global: true, providers: given, exports: given.map((p) => p.provide) },
      ResourceApiModule.forRoot({ cursorKeyFile: join(dir, 'cursor.key') }),
    ],
    controllers: [SlowController],
    providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  // Before any guard: the account every key is scoped by, and a header a replay must override.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      setPrincipal(request, { kind: 'client', accountId: 'acc-1', subjectId: 'c1', scopes: ['write'] });
      reply.header('x-run', 'none');
    });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  return {
    url,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

describe('IdempotencyGuard on a route with its own filter and interceptor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idempotency-guard-'));
  let started: { url: string; close: () => Promise<void> };

  beforeAll(async () => (started = await startApp(dir)));
  afterAll(async () => {
    await started.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = async (key?: string) => {
    const res = await fetch(`${started.url}/external-api/v1/slow`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key && { 'idempotency-key': key }) },
      body: '{}',
    });
    return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
  };

  it('many retries racing the first: one run; each gets a 409 or the first answer, not the route filter', async () => {
    const first = post('race');
    while (handled === 0) await new Promise((r) => setImmediate(r));
    // While the first is held: the retries wait for it (up to the in-flight wait), then answer.
    const retries = Array.from({ length: 8 }, () => post('race'));
    await new Promise((r) => setTimeout(r, 50));
    release!();
    const answers = await Promise.all([first, ...retries]);

    expect(handled).toBe(1);
    expect(answers[0]).toMatchObject({ status: 201, text: '{"n":1}' });
    expect(answers[0].headers['idempotent-replayed']).toBeUndefined();
    for (const retry of answers.slice(1)) {
      if (retry.status === 409) continue;
      // The recorded status, headers and body: its x-run over the one set before it.
      expect(retry).toMatchObject({ status: 201, text: '{"n":1}' });
      expect(retry.headers).toMatchObject({ 'x-run': '1', 'idempotent-replayed': 'true' });
    }
    // The route's own interceptor ran for the request that ran, not for a replay or a 409.
    expect(intercepted).toBe(1);

    // A plain POST still runs the route's interceptor and handler.
    expect(await post()).toMatchObject({ status: 201, text: '{"n":2}' });
    expect([handled, intercepted]).toEqual([2, 2]);
  });
});

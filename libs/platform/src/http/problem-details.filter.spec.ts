import { EventStoreUnavailableError, WrongExpectedVersionError } from '@filing/event-store';
import {
  Body,
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  InternalServerErrorException,
  Logger,
  NotFoundException,
  Param,
  Post,
  Res,
} from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsNotEmpty, IsOptional, IsString, ValidateNested } from 'class-validator';
import type { FastifyReply } from 'fastify';
import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  UnprocessableError,
  ValidationError,
} from '../errors/domain-errors';
import { PROBLEM_CONTENT_TYPE, ProblemDetailsFilter } from './problem-details.filter';
import { createValidationPipe } from './validation.pipe';

class DetailsDto {
  @IsString()
  foo!: string;
}

class CreateThingDto {
  @IsString()
  @IsNotEmpty()
  name!: string;

  @IsIn(['llc', 'corporation'])
  entity_type!: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => DetailsDto)
  details?: DetailsDto;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DetailsDto)
  items?: DetailsDto[];
}

const SECRET = 'db password is hunter2';

const failures: Record<string, () => never> = {
  'not-found': () => {
    throw NotFoundError.of('order', '42');
  },
  conflict: () => {
    throw ConflictError.invalidTransition('order', 'cancel', 'completed');
  },
  validation: () => {
    throw new ValidationError([
      { field: 'entity_id', message: 'entity_id does not exist' },
      { field: 'order_id', message: 'order_id does not exist' },
    ]);
  },
  precondition: () => {
    throw new PreconditionFailedError();
  },
  unprocessable: () => {
    throw new UnprocessableError('Idempotency-Key was used with another body');
  },
  'wrong-version': () => {
    throw new WrongExpectedVersionError('order-1', 3n, 4n);
  },
  unavailable: () => {
    throw new EventStoreUnavailableError(`cannot connect: ${SECRET}`);
  },
  bug: () => {
    throw new TypeError(`cannot read ${SECRET}`);
  },
  'not-an-error': () => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the filter must cope with a thrown non-Error
    throw SECRET;
  },
  forbidden: () => {
    throw new ForbiddenException('Not for you');
  },
  'nest-404': () => {
    throw new NotFoundException('No order with id 7');
  },
  'nest-500': () => {
    throw new InternalServerErrorException(SECRET);
  },
};

@Controller()
class TestController {
  @Get('fail/:kind')
  fail(@Param('kind') kind: string): never {
    return failures[kind]();
  }

  @Post('things')
  create(@Body() body: CreateThingDto): CreateThingDto {
    return body;
  }

  @Post('o/token')
  token(@Res({ passthrough: true }) reply: FastifyReply): never {
    reply.header('www-authenticate', 'Basic realm="token"').header('cache-control', 'no-store');
    throw new HttpException({ error: 'invalid_client', error_description: 'Unknown client' }, 401);
  }
}

describe('ProblemDetailsFilter', () => {
  let app: NestFastifyApplication;
  let logged: jest.SpyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [TestController] }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter({ bodyLimit: 1024 }), {
      logger: false,
    });
    app.useGlobalFilters(new ProblemDetailsFilter());
    app.useGlobalPipes(createValidationPipe());
    // A real socket rather than app.inject(): light-my-request needs cookie@2, which is ESM-only
    // and not transformed by the shared Jest config.
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();
  });
  afterAll(() => app.close());
  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  async function call(method: string, url: string, payload?: string | object, headers: Record<string, string> = {}) {
    const json = typeof payload === 'object';
    const res = await fetch(baseUrl + url, {
      method,
      body: json ? JSON.stringify(payload) : payload,
      headers: json ? { 'content-type': 'application/json', ...headers } : headers,
    });
    const raw = await res.text();
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      headers: Object.fromEntries(res.headers),
      body: JSON.parse(raw),
      raw,
    };
  }

  async function expectProblem(
    res: Awaited<ReturnType<typeof call>>,
    status: number,
    title: string,
    detail: string | RegExp,
  ): Promise<void> {
    expect(res.type).toBe(PROBLEM_CONTENT_TYPE);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ type: 'about:blank', title, status });
    expect(res.body.detail).toEqual(typeof detail === 'string' ? detail : expect.stringMatching(detail));
    expect(res.raw).not.toContain('hunter2');
  }

  it.each([
    ['not-found', 404, 'Not Found', 'No order with id 42'],
    ['conflict', 409, 'Conflict', 'Cannot cancel an order whose status is completed'],
    ['precondition', 412, 'Precondition Failed', /If-Match/],
    ['unprocessable', 422, 'Unprocessable Entity', 'Idempotency-Key was used with another body'],
    ['wrong-version', 409, 'Conflict', /concurrent/],
    ['forbidden', 403, 'Forbidden', 'Not for you'],
    ['nest-404', 404, 'Not Found', 'No order with id 7'],
  ])('maps %s to %d', async (kind, status, title, detail) => {
    const res = await call('GET', `/fail/${kind}`);
    await expectProblem(res, status, title, detail);
    expect(res.body).not.toHaveProperty('errors');
    expect(logged).not.toHaveBeenCalled();
  });

  it('lists every field of a domain ValidationError', async () => {
    const res = await call('GET', '/fail/validation');
    await expectProblem(res, 400, 'Bad Request', 'The request is invalid');
    expect(res.body.errors).toEqual([
      { field: 'entity_id', message: 'entity_id does not exist' },
      { field: 'order_id', message: 'order_id does not exist' },
    ]);
  });

  it('answers 503 with Retry-After when the event store is unreachable, and logs it', async () => {
    const res = await call('GET', '/fail/unavailable');
    await expectProblem(res, 503, 'Service Unavailable', /temporarily unavailable/);
    expect(res.headers['retry-after']).toBe('5');
    expect(logged).toHaveBeenCalled();
  });

  it.each(['bug', 'not-an-error', 'nest-500'])('answers %s with a generic 500 and logs the error', async (kind) => {
    const res = await call('GET', `/fail/${kind}`);
    await expectProblem(res, 500, 'Internal Server Error', 'An unexpected error occurred');
    expect(logged).toHaveBeenCalledWith(
      expect.stringContaining('hunter2'),
      kind === 'not-an-error' ? undefined : expect.any(String),
    );
  });

  it('answers an unknown route with 404', async () => {
    await expectProblem(await call('GET', '/nowhere'), 404, 'Not Found', 'No such route');
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const res = await call('DELETE', '/things');
    await expectProblem(res, 405, 'Method Not Allowed', 'DELETE is not allowed here; allowed: POST');
    expect(res.headers.allow).toBe('POST');
    const get = await call('PUT', '/fail/bug?x=1');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('GET, HEAD');
  });

  it('answers a body over the limit with 413', async () => {
    const res = await call('POST', '/things', { name: 'x'.repeat(2000), entity_type: 'llc' });
    await expectProblem(res, 413, 'Payload Too Large', /too large/i);
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await call('POST', '/things', '<name>x</name>', { 'content-type': 'application/xml' });
    await expectProblem(res, 415, 'Unsupported Media Type', /unsupported media type/i);
  });

  it('answers malformed JSON with 400', async () => {
    const res = await call('POST', '/things', '{"name": ', { 'content-type': 'application/json' });
    await expectProblem(res, 400, 'Bad Request', /JSON/i);
  });

  it('lists every bad DTO field by its JSON path, unknown fields included', async () => {
    const res = await call('POST', '/things', {
      name: 5,
      entity_type: 'bank',
      extra: true,
      details: { foo: 1, bar: 2 },
      items: [{ foo: 'ok' }, { foo: 3 }],
    });
    await expectProblem(res, 400, 'Bad Request', 'The request is invalid');
    const fields = (res.body.errors as Array<{ field: string; message: string }>).map((e) => e.field).sort();
    expect(fields).toEqual(['details.bar', 'details.foo', 'entity_type', 'extra', 'items[1].foo', 'name']);
    expect(res.body.errors).toContainEqual({ field: 'extra', message: 'property extra should not exist' });
    expect(res.body.errors).toContainEqual({ field: 'details.foo', message: 'foo must be a string' });
  });

  it('lists every required field when the body is empty', async () => {
    const res = await call('POST', '/things', {});
    await expectProblem(res, 400, 'Bad Request', 'The request is invalid');
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['entity_type', 'name']);
  });

  it('passes a valid DTO through', async () => {
    const res = await call('POST', '/things', { name: 'Acme', entity_type: 'llc', details: { foo: 'x' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ name: 'Acme', entity_type: 'llc', details: { foo: 'x' } });
  });

  it('leaves OAuth errors (RFC 6749 bodies) unchanged, with their headers', async () => {
    const res = await call('POST', '/o/token');
    expect(res.status).toBe(401);
    expect(res.type).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Unknown client' });
    expect(res.headers['www-authenticate']).toBe('Basic realm="token"');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

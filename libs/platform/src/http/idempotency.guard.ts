import { extend } from '../domain/extend';
import {
  applyDecorators,
  type ArgumentsHost,
  type CanActivate,
  Catch,
  type ExceptionFilter,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  type OnModuleInit,
  SetMetadata,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { ConflictError, UnprocessableError, ValidationError } from '../errors/domain-errors';
import { type IdempotencyClaim, IdempotencyStore, type StoredResponse } from './idempotency.store';
import { commandContextOf, getPrincipal, type Principal } from './principal';

export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

export interface IdempotencyOptions {
  /** POSTs under these path prefixes honour `Idempotency-Key`. */
  readonly pathPrefixes: readonly string[];
  /** How long a request waits for a concurrent one with its key to answer before a 409. */
  readonly inFlightWaitMs: number;
}

const SKIP_IDEMPOTENCY = 'filing:skip-idempotency';
/** Read by the OpenAPI pass: such a POST does not declare `Idempotency-Key`. */
export const IDEMPOTENCY_IGNORED_EXTENSION = 'x-idempotency-key-ignored';

/**
 * For a POST whose answer holds a credential (a client secret shown once): its answer must not be
 * stored at rest, so `Idempotency-Key` is ignored there and every request runs.
 */
export const SkipIdempotency = () =>
  applyDecorators(SetMetadata(SKIP_IDEMPOTENCY, true), ApiExtension(IDEMPOTENCY_IGNORED_EXTENSION, true));

const REDACT_ON_REPLAY = 'filing:idempotency-redact';

/**
 * For a POST whose answer holds a secret the caller can read again elsewhere (a webhook
 * endpoint's signing secret: `GET /webhook-endpoints/{id}/secret`): the answer is stored
 * without these fields, so no secret sits in the key store; a replay answers without them.
 */
export const RedactOnReplay = (...fields: string[]) => SetMetadata(REDACT_ON_REPLAY, fields);

/** The key's rule, shared with the OpenAPI document. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_RULE = 'Idempotency-Key must be 1 to 255 visible ASCII characters';
const PENDING = Symbol('idempotency.pending');
/** Not replayed: they describe the connection or this one response, not the answer. */
const UNSTORED_HEADERS = new Set([
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'date',
  'set-cookie',
]);

interface Pending {
  readonly claim: IdempotencyClaim;
  readonly redact: readonly string[];
}
type MarkedRequest = FastifyRequest & { [PENDING]?: Pending };

/**
 * `Idempotency-Key` on POST (CONTRACT.md §3): the first request with a key runs; a retry with the
 * same key and the same request (method, path, canonical JSON body) within 24 h replays its
 * answer (status, headers, body, plus `Idempotent-Replayed: true`); the same key with another
 * request is a 422. A retry while the first is still running waits briefly for its answer and
 * replays it; a 409 if it does not come in time. Keys are scoped by account and kept in the event
 * store (IdempotencyStore), so this holds across every instance on one store.
 *
 * A guard, bound to each POST route after all its other guards (`RouteEnhancers`), so it decides
 * where an interceptor would (after authentication, the rate limit and the JSON-only check, before
 * the pipes), without the Observable pipeline an interceptor puts on every request, most of which
 * carry no key. A replay is thrown (`IdempotentReplay`) and answered by `IdempotentReplayFilter`,
 * bound to the same routes: the handler does not run.
 *
 * The answer is recorded in Fastify's onSend hook (see `IdempotencyHooks`), because only there
 * are the final status, headers and serialized body known, including the problem+json that the
 * exception filter makes of a 4xx. 400, 429 and 5xx are never recorded: the key is released and a
 * retry runs again.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(
    private readonly store: IdempotencyStore,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): true | Promise<true> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<MarkedRequest>();
    if (request.method !== 'POST' || !this.options.pathPrefixes.some((p) => request.url.startsWith(p))) return true;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return true;
    if (this.reflector.getAllAndOverride<boolean>(SKIP_IDEMPOTENCY, [context.getHandler(), context.getClass()])) {
      return true;
    }
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header)) {
      throw ValidationError.field('Idempotency-Key', IDEMPOTENCY_KEY_RULE);
    }
    const principal = getPrincipal(request);
    if (!principal) return true; // unauthenticated routes have no account to scope keys by
    const redact =
      this.reflector.getAllAndOverride<string[]>(REDACT_ON_REPLAY, [context.getHandler(), context.getClass()]) ?? [];
    return this.reserve(request, header, principal, redact);
  }

  private async reserve(
    request: MarkedRequest,
    key: string,
    principal: Principal,
    redact: readonly string[],
  ): Promise<true> {
    const scope = principal.accountId ?? `${principal.kind}:${principal.subjectId}`;
    const reservation = await this.store.reserve(
      scope,
      key,
      fingerprint(request),
      commandContextOf(principal, request.headers['x-request-id']),
      this.options.inFlightWaitMs,
    );
    switch (reservation.kind) {
      case 'mismatch':
        throw new UnprocessableError('This Idempotency-Key was already used with another request; use a new key');
      case 'in-flight':
        throw new ConflictError('A request with this Idempotency-Key is still being processed; retry shortly');
      case 'replay':
        throw new IdempotentReplay(reservation.response);
      case 'reserved':
        request[PENDING] = { claim: reservation.claim, redact };
        return true;
    }
  }
}

/** The recorded answer to a retry: thrown by IdempotencyGuard so that the handler does not run. */
export class IdempotentReplay extends Error {
  constructor(readonly response: StoredResponse) {
    super('Answered with the recorded response of an earlier request with this Idempotency-Key');
  }
}

/**
 * Sends a replay as recorded: its status and headers win over any set before it (as the rate
 * limit's), plus `Idempotent-Replayed: true`. Caught here, before the global filter, which would
 * make a problem of it.
 */
@Catch(IdempotentReplay)
export class IdempotentReplayFilter implements ExceptionFilter<IdempotentReplay> {
  catch({ response }: IdempotentReplay, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const noBody = response.status === 204 || response.status === 205 || response.status === 304;
    reply
      .status(response.status)
      .headers(extend(response.headers, { 'idempotent-replayed': 'true' }))
      .send(noBody ? undefined : response.body);
  }
}

/** Registers the Fastify hooks that record (or release) a reserved key's answer. */
@Injectable()
export class IdempotencyHooks implements OnModuleInit {
  private readonly logger = new Logger(IdempotencyGuard.name);

  constructor(
    private readonly store: IdempotencyStore,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify?.addHook) return; // no HTTP server (the CLI)
    // Awaited before the answer leaves: once a client has it, a retry on any instance replays it.
    fastify.addHook('onSend', async (request: MarkedRequest, reply: FastifyReply, payload: unknown) => {
      const pending = request[PENDING];
      if (!pending) return payload;
      request[PENDING] = undefined;
      const body =
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : payload == null
              ? ''
              : null;
      if (body !== null && isFinal(reply.statusCode)) {
        const stored = pending.redact.length > 0 ? withoutFields(body, pending.redact) : body;
        await this.settle(
          this.store.complete(pending.claim, { status: reply.statusCode, headers: storedHeaders(reply), body: stored }),
        );
      } else {
        await this.settle(this.store.release(pending.claim));
      }
      return payload;
    });
    // A response that never reached onSend (e.g. a broken connection while serializing).
    fastify.addHook('onResponse', async (request: MarkedRequest) => {
      const pending = request[PENDING];
      request[PENDING] = undefined;
      if (pending) await this.settle(this.store.release(pending.claim));
    });
  }

  /** The answer goes out whatever happens here: the request's own work is done. An unrecorded claim lapses after its lease. */
  private async settle(recording: Promise<void>): Promise<void> {
    try {
      await recording;
    } catch (err) {
      this.logger.warn(
        `Could not record an Idempotency-Key outcome (the key frees up after its lease): ${(err as Error).message}`,
      );
    }
  }
}

/**
 * Answers worth replaying: what the request did. A 400 (the request was refused before it ran:
 * bad fields, a bad header) is not stored, so the corrected request may reuse the key, as with
 * Stripe; nor are a 429 and 5xx (nothing happened, a retry runs again).
 */
function isFinal(status: number): boolean {
  return status >= 200 && status < 500 && status !== 400 && status !== 429;
}

/** A JSON object answer without `fields`; anything else as it was. */
function withoutFields(body: string, fields: readonly string[]): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return body;
  return JSON.stringify(Object.fromEntries(Object.entries(value).filter(([k]) => !fields.includes(k))));
}

function storedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined || UNSTORED_HEADERS.has(name.toLowerCase())) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(canonicalJson(request.body ?? null))
    .digest('base64url');
}

/** JSON with sorted keys: the same body in another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HaltReport } from '../processors/processor-types';
import { servedPaths } from '../projections/projection';
import { ProjectionRunner } from '../projections/projection-runner';

/** Answered without authentication, so without the read models authentication needs. */
const PUBLIC_PATHS = [/^\/(healthz|readyz|metrics|_probe)$/, /^\/docs(\/|$)/, /^\/\.well-known\//, /\/openapi\.json$/];

const HALTED_RETRY_AFTER_S = 30;

export type HaltedReadModel = HaltReport & { readonly projection: string };

/** The 503 problem document for a request that needs a halted read model: it names it and its event. */
export function haltedReadModelProblem(halted: readonly HaltedReadModel[]): object {
  const [first] = halted;
  return {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail:
      `The read model ${first.projection} is halted on event ${first.eventId} (${first.eventType}); ` +
      'this request needs it. Other requests are served; operators have been alerted.',
    read_model: first.projection,
    event_id: first.eventId,
    event_type: first.eventType,
    halted: halted.map((h) => ({ read_model: h.projection, event_id: h.eventId, event_type: h.eventType })),
  };
}

/**
 * While a read model is halted on an event, requests that need it answer 503 at once, naming it
 * and the event — never a wait until a timeout, never an answer from a read model that stopped
 * moving. Which requests need which read model: `Projection.serves`. The read models
 * authentication depends on fail closed: while one is halted, every authenticated request is a
 * 503 (a revoked token is never accepted because its revocation could not be applied).
 */
@Injectable()
export class HaltedReadModelHooks implements OnModuleInit {
  constructor(
    private readonly runner: ProjectionRunner,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify?.addHook) return;
    // Callback style: no promise per request for the common case, where nothing is halted.
    fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const halted = this.haltedFor(request.url);
      if (halted.length === 0) return done();
      // Retry-After: a hint, not a promise: the read model resumes when an operator has acted.
      void reply
        .status(503)
        .header('content-type', 'application/problem+json; charset=utf-8')
        .header('retry-after', String(HALTED_RETRY_AFTER_S))
        .send(haltedReadModelProblem(halted));
    });
  }

  /** The halted read models a request to `url` needs (none: the common case, one look at a map). */
  haltedFor(url: string): HaltedReadModel[] {
    const halted = this.runner.haltedProjections();
    if (halted.length === 0) return [];
    const path = url.split('?', 1)[0];
    const isPublic = PUBLIC_PATHS.some((p) => p.test(path));
    const byName = new Map(this.runner.registered.map((p) => [p.name, servedPaths(p)]));
    return halted.filter((h) => {
      const serves = byName.get(h.projection);
      if (serves === 'authentication') return !isPublic;
      return serves?.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ?? false;
    });
  }
}

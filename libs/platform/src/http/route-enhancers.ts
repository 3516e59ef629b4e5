import { type CanActivate, type ExecutionContext, Injectable, type OnModuleInit, RequestMethod } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { HttpAdapterHost, MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { IdempotencyGuard, IdempotentReplayFilter } from './idempotency.guard';
import { JsonBodyGuard } from './json-body.guard';

/** The request decorator through which a route's shared enhancers reach its own app's. */
const APP_ENHANCERS = 'filingRouteEnhancers';

interface AppEnhancers {
  readonly jsonBody: CanActivate;
  readonly idempotency: CanActivate;
}

function appEnhancers(context: ExecutionContext): AppEnhancers | undefined {
  return context.switchToHttp().getRequest<{ [APP_ENHANCERS]?: AppEnhancers }>()[APP_ENHANCERS];
}

/*
 * What is bound to the routes. Route metadata belongs to the controller class, which every app of
 * the process shares (the tests run two on one store), so these hand each request to the
 * enhancer of the app serving it; an app without ResourceApiModule has none and is let through.
 */
const JSON_BODY: CanActivate = {
  canActivate: (context) => appEnhancers(context)?.jsonBody.canActivate(context) ?? true,
};
const IDEMPOTENCY: CanActivate = {
  canActivate: (context) => appEnhancers(context)?.idempotency.canActivate(context) ?? true,
};
/** Holds nothing of an app's: it sends the answer it is thrown. */
const IDEMPOTENT_REPLAY = new IdempotentReplayFilter();

/**
 * Binds the APIs' shared checks to each route as the route's own guards, rather than as
 * APP_GUARD / APP_INTERCEPTOR:
 * - JsonBodyGuard on every route, after the route's own guards; the global guards (bearer, rate
 *   limit) run before any route's, so it runs after them all, where it ran as a global interceptor;
 * - IdempotencyGuard after it on the routes that answer POST, the only method it acts on, with
 *   the filter that sends its replays. As guards, neither puts an rxjs pipeline (and close
 *   listeners) on the requests: no route of the APIs runs an interceptor.
 */
@Injectable()
export class RouteEnhancers implements OnModuleInit {
  constructor(
    modules: ModulesContainer,
    private readonly adapterHost: HttpAdapterHost,
    private readonly jsonBody: JsonBodyGuard,
    private readonly idempotency: IdempotencyGuard,
  ) {
    // Here, not in onModuleInit: every controller has been scanned when the providers are made,
    // and Nest reads route metadata when it registers the routes, before that hook.
    bindRoutes(modules);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify?.decorateRequest) return; // no HTTP server (the CLI)
    const enhancers: AppEnhancers = { jsonBody: this.jsonBody, idempotency: this.idempotency };
    // A getter on this app's request prototype: nothing to do per request.
    fastify.decorateRequest(APP_ENHANCERS, { getter: () => enhancers });
  }
}

function bindRoutes(modules: ModulesContainer): void {
  const scanner = new MetadataScanner();
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const prototype = (wrapper.metatype as { prototype?: Record<string, unknown> } | null)?.prototype;
      if (!prototype) continue;
      // The routes as Nest's own PathsExplorer finds them.
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        append(GUARDS_METADATA, handler, JSON_BODY);
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
        if (method === RequestMethod.POST || method === RequestMethod.ALL) {
          append(GUARDS_METADATA, handler, IDEMPOTENCY);
          append(EXCEPTION_FILTERS_METADATA, handler, IDEMPOTENT_REPLAY);
        }
      }
    }
  }
}

/** After the handler's own; once, though every app (and a handler inherited twice) binds it again. */
function append(key: string, handler: object, enhancer: object): void {
  const bound = (Reflect.getMetadata(key, handler) as unknown[] | undefined) ?? [];
  if (!bound.includes(enhancer)) Reflect.defineMetadata(key, [...bound, enhancer], handler);
}

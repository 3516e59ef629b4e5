import type { ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import type pino from 'pino';
import {
  answerClientError,
  answerFrameworkError,
  type AppConfig,
  createLogger,
  fastifyTrustProxy,
  MAX_PARAM_LENGTH,
  NODE_MAX_HEADER_BYTES,
  PinoNestLogger,
  parseJsonBody,
  refuseOversizedHeaders,
} from '@filing/platform';
import { EventStoreAccessError, verifyEventStoreAccess } from '@filing/event-store';
import { AppModule } from './app.module';
import { dataDirLockModule, lockDataDir } from './data-dir-lock';
import { instrumentHttp } from './metrics/http-metrics';
import { setupOpenApi } from './openapi';

/** Largest request body: a 10 MiB document as base64 in JSON, with room for its fields. */
export const BODY_LIMIT_BYTES = 15 * 1024 * 1024;

export interface CreateAppOptions {
  /** Where logs go (default stdout): tests capture them to check that no secret is logged. */
  readonly logDestination?: pino.DestinationStream;
  /** Extra modules (tests and benchmarks: probe routes). */
  readonly imports?: NonNullable<ModuleMetadata['imports']>;
}

/** Builds the whole service (not listening yet): used by main.ts and by the end-to-end tests. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  // One service per DATA_DIR: locked before any module opens a database there.
  const lock = lockDataDir(config.dataDir);
  try {
    await verifyStoreAccess(config);
  } catch (err) {
    lock.release();
    throw err;
  }
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    // TRUST_PROXY: request.ip and request.protocol come from a trusted proxy's X-Forwarded-*, so
    // the failed-auth brake and the sign-in throttle count callers, not the load balancer.
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // `/o/token/` (CONTRACT.md) and `/o/token` are the same route: Nest strips the trailing slash.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // What Fastify and Node refuse before any route answers in the API's formats (http-edge.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    ...(config.tls
      ? {
          https: {
            cert: readFileSync(config.tls.certFile),
            key: readFileSync(config.tls.keyFile),
            maxHeaderSize: NODE_MAX_HEADER_BYTES,
          },
        }
      : { http: { maxHeaderSize: NODE_MAX_HEADER_BYTES } }),
  });
  // First of the onRequest hooks: oversized headers are refused before anything else reads them.
  refuseOversizedHeaders(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, [...(options.imports ?? []), dataDirLockModule(lock)]),
    adapter,
    {
      logger: new PinoNestLogger(createLogger(config.logLevel, options.logDestination)),
    },
  );
  instrumentHttp(app);
  // JSON routes only: without Fastify's text/plain parser a text body is a 415, not a string DTO.
  app.getHttpAdapter().getInstance().removeContentTypeParser('text/plain');
  app.useBodyParser('application/json', { bodyLimit: BODY_LIMIT_BYTES }, parseJsonBody);
  setupOpenApi(app, { bodyLimitBytes: BODY_LIMIT_BYTES });
  app.enableShutdownHooks();
  return app;
}

/**
 * Credentials the store refuses, or a server certificate the CA file does not vouch for, stop
 * the start with one line naming the variable: started anyway, the service would answer 503 to
 * every request while its processors retried for ever.
 */
async function verifyStoreAccess(config: AppConfig): Promise<void> {
  if (config.eventStore.kind !== 'esdb') return;
  try {
    await verifyEventStoreAccess(config.eventStore.connectionString);
  } catch (err) {
    if (err instanceof EventStoreAccessError)
      throw new EventStoreAccessError(`EVENTSTORE_CONNECTION_STRING: ${err.message}`);
    throw err;
  }
}

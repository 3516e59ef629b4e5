import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import { type AppConfig, createLogger, PinoNestLogger } from '@filing/platform';
import { AppModule } from './app.module';
import { instrumentHttp } from './metrics/http-metrics';

/** Largest request body: a 10 MiB document as base64 in JSON, with room for its fields. */
export const BODY_LIMIT_BYTES = 15 * 1024 * 1024;

/** Builds the whole service (not listening yet): used by main.ts and by the end-to-end tests. */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    ...(config.tls
      ? { https: { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) } }
      : {}),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: new PinoNestLogger(createLogger(config.logLevel)),
  });
  instrumentHttp(app);
  // JSON routes only: without Fastify's text/plain parser a text body is a 415, not a string DTO.
  app.getHttpAdapter().getInstance().removeContentTypeParser('text/plain');
  app.enableShutdownHooks();
  return app;
}

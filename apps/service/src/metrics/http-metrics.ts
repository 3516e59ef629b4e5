import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Metrics } from '@filing/platform';

/**
 * Times every response by its route pattern (never the raw URL: ids would explode the label
 * set); requests that matched no route share one label.
 */
export function instrumentHttp(app: NestFastifyApplication): void {
  const { httpDuration } = app.get(Metrics);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      httpDuration.observe(
        {
          method: request.method,
          route: request.routeOptions?.url ?? 'unmatched',
          status_code: String(reply.statusCode),
        },
        reply.elapsedTime / 1000,
      );
      done();
    });
}

import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';

const FORM = 'application/x-www-form-urlencoded';
const ENDPOINTS = new Set(['/o/token', '/o/revoke_token', '/o/introspect']);

/**
 * Runs before Fastify parses the body (an `onRequest` hook), for every request under `/o/`:
 * - `Cache-Control: no-store` and `Pragma: no-cache` on every answer, errors and 404s included
 *   (set on the Node response, which Fastify merges into whatever it sends);
 * - a POST whose Content-Type is not a form is answered 400 `invalid_request` (CONTRACT.md §1)
 *   rather than the 415 Fastify would give for a type it cannot parse.
 */
@Injectable()
export class OAuthEndpointHooks implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (!adapter || adapter.getType() !== 'fastify') return;
    const fastify = adapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, reply, done) => {
      const path = request.url.split('?', 1)[0];
      if (!path.startsWith('/o/')) return done();
      reply.raw.setHeader('cache-control', 'no-store');
      reply.raw.setHeader('pragma', 'no-cache');
      const endpoint = path.endsWith('/') ? path.slice(0, -1) : path;
      if (request.method === 'POST' && ENDPOINTS.has(endpoint)) {
        const type = (request.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
        if (type !== FORM) {
          reply
            .code(400)
            .type('application/json; charset=utf-8')
            .send(
              JSON.stringify({
                error: 'invalid_request',
                error_description: `Content-Type must be ${FORM}`,
              }),
            );
          return;
        }
      }
      done();
    });
  }
}

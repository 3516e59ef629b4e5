import { BearerErrorDto, ProblemDto } from '@filing/platform';
import { ANY_NOTIFICATION, notificationComponents } from '@filing/webhooks';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, type SchemaObject, SwaggerModule } from '@nestjs/swagger';
import { describeErrors } from './openapi-errors';

export const OPENAPI_JSON_PATH = 'external-api/v1/openapi.json';

/** The document's title, description and security schemes. */
function documentConfig() {
  return (
    new DocumentBuilder()
      .setTitle('Filing Service external API')
      .setDescription(
        'Entities, jurisdictions, documents, tasks, orders and webhook endpoints. Authenticate with an OAuth 2.0 ' +
          'client-credentials token from POST /o/token/ (scopes `read` for GET/HEAD, `write` for the rest), sent as ' +
          '`Authorization: Bearer <token>`. Errors are application/problem+json (RFC 9457), except a bad ' +
          'token, a missing scope or a token outside the Authorization header: RFC 6750 `{error, error_description}` as ' +
          'application/json, with `WWW-Authenticate`.',
      )
      .setVersion('1')
      .addOAuth2(
        {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: '/o/token/', scopes: { read: 'Read', write: 'Write' } } },
        },
        'oauth2',
      )
      // Opaque tokens, not JWTs (Nest's default bearerFormat would say JWT).
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build()
  );
}

/** What the service sends to a webhook endpoint (OpenAPI 3.1's `webhooks`, as a 3.0 extension). */
const WEBHOOKS_EXTENSION = {
  notification: {
    post: {
      summary: 'A notification, signed per Standard Webhooks (webhook-id = event_id)',
      requestBody: {
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${ANY_NOTIFICATION}` } } },
      },
      responses: { '2XX': { description: 'Received (any 2xx); anything else is retried' } },
    },
  },
};

/**
 * The OpenAPI document of the external API, generated from the same controllers and DTOs that
 * validate requests, at `/external-api/v1/openapi.json`, browsable at `/docs`. Both are public.
 */
export function setupOpenApi(app: NestFastifyApplication, options: { bodyLimitBytes: number }): OpenAPIObject {
  const config = documentConfig();
  const full = SwaggerModule.createDocument(app, config, { extraModels: [ProblemDto, BearerErrorDto] });
  // Only the customer-facing API: operator routes, health and the settings screen stay out, and
  // so do the schemas only they use.
  const paths = Object.fromEntries(
    Object.entries(full.paths)
      .filter(([path]) => path.startsWith('/external-api/v1/'))
      .map(([path, item]) => [path, describeErrors(item, options.bodyLimitBytes)]),
  );
  const schemas = full.components?.schemas ?? {};
  const used = referencedSchemas(paths, schemas);
  const document: OpenAPIObject & { 'x-webhooks': unknown } = {
    ...full,
    paths,
    components: {
      ...full.components,
      schemas: {
        ...Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
        // The webhook payloads, from the notification table (3.0 has no `webhooks` section).
        ...(notificationComponents() as Record<string, SchemaObject>),
      },
    },
    // What the service sends to a webhook endpoint: a 3.1 `webhooks` entry, as an extension of 3.0.
    'x-webhooks': WEBHOOKS_EXTENSION,
  };
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Filing Service API',
  });
  return document;
}

/** The names of the component schemas `root` refers to, directly or through other schemas. */
function referencedSchemas(root: unknown, schemas: Record<string, unknown>): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!found.has(name)) {
          found.add(name);
          visit(schemas[name]);
        }
      } else visit(value);
    }
  };
  visit(root);
  return found;
}

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const OPENAPI_JSON_PATH = 'external-api/v1/openapi.json';

/**
 * The OpenAPI document of the external API, generated from the same controllers and DTOs that
 * validate requests, at `/external-api/v1/openapi.json`, browsable at `/docs`. Both are public.
 */
export function setupOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Filing Service external API')
    .setDescription(
      'Entities, jurisdictions, documents, tasks, orders and webhook endpoints. Authenticate with an OAuth 2.0 ' +
        'client-credentials token from POST /o/token/ (scopes `read` for GET/HEAD, `write` for the rest), sent as ' +
        '`Authorization: Bearer <token>`. Errors are application/problem+json (RFC 9457).',
    )
    .setVersion('1')
    .addOAuth2({ type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/o/token/', scopes: { read: 'Read', write: 'Write' } } } }, 'oauth2')
    .addBearerAuth({ type: 'http', scheme: 'bearer' }, 'bearer')
    .addSecurityRequirements('bearer')
    .build();
  const full = SwaggerModule.createDocument(app, config);
  // Only the customer-facing API: operator routes, health and the settings screen stay out, and
  // so do the schemas only they use.
  const paths = Object.fromEntries(Object.entries(full.paths).filter(([path]) => path.startsWith('/external-api/v1/')));
  const schemas = full.components?.schemas ?? {};
  const used = referencedSchemas(paths, schemas);
  const document: OpenAPIObject = {
    ...full,
    paths,
    components: { ...full.components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))) },
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

import { startService, type TestService } from '../support/service';

describe('OpenAPI document and /docs', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => service?.destroy());

  it('serves the external API document without a token, generated from the validating DTOs', async () => {
    const res = await fetch(`${service.url}/external-api/v1/openapi.json`);
    expect(res.status).toBe(200);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const doc = (await res.json()) as any;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/external-api/v1/entities', '/external-api/v1/entities/{id}']));
    expect(Object.keys(doc.paths).every((p: string) => p.startsWith('/external-api/v1/'))).toBe(true);
    // The request schema carries the DTO's validation rules (class-validator → OpenAPI).
    const post = doc.paths['/external-api/v1/entities'].post;
    const ref: string = post.requestBody.content['application/json'].schema.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!];
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'entity_type']));
    expect(schema.properties.entity_type.enum).toEqual(
      expect.arrayContaining(['llc', 'corporation', 'nonprofit', 'partnership', 'sole_proprietorship', 'other']),
    );
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves a browsable page at /docs', async () => {
    const res = await fetch(`${service.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('swagger-ui');
  });
});

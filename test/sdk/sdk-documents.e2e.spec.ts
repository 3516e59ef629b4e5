/**
 * The typed client's document operations against the real service: upload as base64, exact
 * typed fields, the content back as bytes with its content type (and its SHA-256), PATCH with
 * If-Match, filters (entity_id, order_id), pages, history, DELETE (204) after which the document
 * and its content are 404.
 */
import { ApiError, collect, type Document, type Entity, FilingClient } from '@filing/client';
import { createHash, randomBytes } from 'node:crypto';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { keysOf, shape } from './sdk-support';

const DOCUMENT = shape<Document>()({
  id: 1,
  entity_id: 1,
  order_id: 1,
  title: 1,
  document_type: 1,
  content_type: 1,
  size_bytes: 1,
  sha256: 1,
  created_at: 1,
  updated_at: 1,
  version: 1,
});

describe('SDK documents against the service', () => {
  let service: TestService;
  let client: FilingClient;
  let stranger: FilingClient;
  let entity: Entity;

  beforeAll(async () => {
    service = await startService();
    const a = await provisionAccount(service);
    const b = await provisionAccount(service);
    client = new FilingClient({ baseUrl: service.url, clientId: a.clientId, clientSecret: a.clientSecret });
    stranger = new FilingClient({ baseUrl: service.url, clientId: b.clientId, clientSecret: b.clientSecret });
    entity = await client.entities.create({ name: 'Documents LLC', entity_type: 'llc' });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('uploads, reads the bytes back, updates with If-Match, deletes (204) and then answers 404', async () => {
    const bytes = randomBytes(64 * 1024);
    const doc: Document = await client.documents.create({
      entity_id: entity.id,
      title: 'Certificate of formation',
      document_type: 'certificate',
      content_type: 'application/pdf',
      content_base64: bytes.toString('base64'),
    });
    expect(keysOf(doc)).toEqual(DOCUMENT);
    expect(doc).toMatchObject({
      order_id: null,
      content_type: 'application/pdf',
      size_bytes: bytes.length,
      version: 0,
    });
    expect(doc.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));

    const content = await client.documents.content(doc.id);
    expect(content.content_type).toMatch(/^application\/pdf/);
    expect(Buffer.compare(content.data, bytes)).toBe(0);

    const renamed = await client.documents.update(doc.id, { title: 'Certificate (stamped)' }, { ifMatch: doc.version });
    expect(keysOf(renamed)).toEqual(DOCUMENT);
    expect(renamed).toMatchObject({ title: 'Certificate (stamped)', version: 1 });
    await expect(client.documents.delete(doc.id, { ifMatch: 0 })).rejects.toMatchObject({ status: 412 });
    expect((await client.documents.history(doc.id)).data.map((h) => h.type)).toEqual([
      'DocumentAdded',
      'DocumentUpdated',
    ]);

    await expect(client.documents.delete(doc.id, { ifMatch: renamed.version })).resolves.toBeUndefined();
    const gone = (await client.documents.get(doc.id).catch((e) => e)) as ApiError;
    expect(gone).toBeInstanceOf(ApiError);
    expect(gone.status).toBe(404);
    await expect(client.documents.content(doc.id)).rejects.toMatchObject({ name: 'ApiError', status: 404 });
  });

  it('filters by entity and order, pages through listAll, and keeps other accounts out', async () => {
    const order = await client.orders.create({ entity_id: entity.id, order_type: 'formation' });
    const upload = (title: string, orderId?: string) =>
      client.documents.create({
        entity_id: entity.id,
        ...(orderId ? { order_id: orderId } : {}),
        title,
        document_type: 'filing',
        content_type: 'text/plain',
        content_base64: Buffer.from(title).toString('base64'),
      });
    const a = await upload('a');
    const b = await upload('b', order.id);
    const c = await upload('c', order.id);

    const forOrder = await client.documents.list({ order_id: order.id });
    expect(forOrder.data.map((d) => d.id)).toEqual([b.id, c.id]);
    expect(forOrder.data[0]).toMatchObject({ order_id: order.id });
    const all = await collect(client.documents.listAll({ entity_id: entity.id, limit: 2 }));
    expect(all.map((d) => d.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
    all.forEach((d) => expect(keysOf(d)).toEqual(DOCUMENT));
    expect((await client.documents.content(a.id)).data.toString()).toBe('a');

    await expect(stranger.documents.get(a.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.documents.content(a.id)).rejects.toMatchObject({ status: 404 });
    const bad = (await client.documents
      .create({
        entity_id: entity.id,
        title: '',
        document_type: 'x',
        content_type: 'text/plain',
        content_base64: '%%%',
      })
      .catch((e) => e)) as ApiError;
    expect(bad.status).toBe(400);
    expect(bad.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['title', 'content_base64']));
  });
});

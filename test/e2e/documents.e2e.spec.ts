/**
 * The documents family over real HTTP, on both event stores: the operations every family shares
 * (test/support/family.ts), then documents' own: content download byte for byte, DELETE (404
 * everywhere afterwards, content stream gone), the order_id reference, filters and pages, the
 * bytes in content streams of their own (never in the document's events), the all-or-nothing
 * write, a replay that keeps the content, the import of an earlier version's documents.db, and
 * bad inputs.
 */
import {
  EVENT_STORE,
  EventStoreUnavailableError,
  type EventStore,
  type Position,
  comparePositions,
} from '@filing/event-store';
import { buildMetadata, ReadYourWrites, toEventData } from '@filing/platform';
import Database from 'better-sqlite3';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Answer,
  type BadInput,
  commonBadInputs,
  expectProblem,
  expectRefusedWithoutEvents,
  MISSING_ID,
  type Resource,
  resourceApi,
} from '../support/api';
import { bearer, provisionAccount, type ProvisionedClient, requestToken } from '../support/auth';
import { describeResourceFamily } from '../support/family';
import { startService, type TestService } from '../support/service';

interface Document extends Resource {
  readonly entity_id: string;
  readonly order_id: string | null;
  readonly title: string;
  readonly content_type: string;
  readonly size_bytes: number;
  readonly sha256: string;
}

const MiB = 1024 * 1024;
/** Every byte value, several times over. */
const ALL_BYTES = Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7 + 3) % 256));
const SMALL = Buffer.from('%PDF-1.7 small');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(['sqlite', 'esdb'] as const)('documents over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  let store: EventStore;
  let owner: ProvisionedClient;
  let other: ProvisionedClient;
  let entityId: string;
  let otherEntityId: string;
  let orderId: string;
  let otherOrderId: string;
  const api = resourceApi(() => service);
  const { call, create, walk } = api;

  beforeAll(async () => {
    service = await startService({ eventStore });
    store = service.app.get<EventStore>(EVENT_STORE);
    [owner, other] = await Promise.all([provisionAccount(service), provisionAccount(service)]);
    [entityId, otherEntityId] = await Promise.all(
      [owner, other].map(
        async (client) => (await create(client, '/entities', { name: 'Papers LLC', entity_type: 'llc' })).id,
      ),
    );
    [orderId, otherOrderId] = await Promise.all([
      create(owner, '/orders', { entity_id: entityId, order_type: 'formation' }).then((o) => o.id),
      create(other, '/orders', { entity_id: otherEntityId, order_type: 'formation' }).then((o) => o.id),
    ]);
  }, 60_000);
  afterAll(async () => service?.destroy());

  const body = (fields: Record<string, unknown> = {}, content: Buffer = SMALL) => ({
    entity_id: entityId,
    title: 'Certificate of Formation',
    document_type: 'certificate',
    content_type: 'application/pdf',
    content_base64: content.toString('base64'),
    ...fields,
  });
  const addDocument = (client: ProvisionedClient, fields: Record<string, unknown> = {}, content?: Buffer) =>
    create<Document>(client, '/documents', body(fields, content));

  /** GET /documents/{id}/content, the bytes as received. */
  async function download(
    client: ProvisionedClient,
    id: string,
  ): Promise<{ status: number; headers: Record<string, string>; bytes: Buffer }> {
    const res = await fetch(`${service.url}/external-api/v1/documents/${id}/content`, {
      headers: bearer(client.token),
    });
    return {
      status: res.status,
      headers: Object.fromEntries(res.headers),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  }

  /** The chunk events a stream read of the document's (encrypted) content stream shows (none once deleted). */
  const contentChunks = async (id: string) => store.readStream(`documentcipher-${id}`);

  /** The content streams written after `since`, each with the number of chunks it reads now. */
  async function contentStreamsSince(since: Position | null): Promise<Array<[string, number]>> {
    const events = await store.readAll({ from: since ?? 'start' });
    const streams = new Set(
      events
        .filter((e) => !since || comparePositions(e.position, since) > 0)
        .map((e) => e.streamId)
        .filter((s) => s.startsWith('documentcipher-')),
    );
    return Promise.all(
      [...streams].map(async (stream): Promise<[string, number]> => [stream, (await store.readStream(stream)).length]),
    );
  }

  describeResourceFamily(
    {
      api,
      service: () => service,
      owner: () => owner,
      other: () => other,
      entityId: () => entityId,
      otherEntityId: () => otherEntityId,
    },
    {
      path: '/documents',
      idField: 'document_id',
      createBody: (id) => body({ entity_id: id }),
      answered: ({ content_base64: _, ...metadata }) => metadata,
      created: { order_id: null, size_bytes: SMALL.length, sha256: sha256(SMALL) },
      changes: [
        { title: 'Certificate (signed)' },
        { title: 'Amended certificate', document_type: 'amendment' },
        { document_type: 'certificate' },
      ],
      eventTypes: ['DocumentAdded', 'DocumentUpdated'],
    },
  );

  describe('content', () => {
    it('downloads the bytes exactly, every byte value, with their content type, Content-Length and ETag', async () => {
      const document = await addDocument(owner, { content_type: 'application/octet-stream' }, ALL_BYTES);
      expect(document).toMatchObject({ size_bytes: ALL_BYTES.length, sha256: sha256(ALL_BYTES) });
      const res = await download(owner, document.id);
      expect(res.status).toBe(200);
      expect(res.bytes.equals(ALL_BYTES)).toBe(true);
      expect(res.headers).toMatchObject({
        'content-type': 'application/octet-stream',
        'content-length': String(ALL_BYTES.length),
        etag: '"0"',
        'x-content-type-options': 'nosniff',
        'content-disposition': 'attachment',
        'repr-digest': `sha-256=:${createHash('sha256').update(ALL_BYTES).digest('base64')}:`,
      });
    });

    it('serves a content type with parameters as given, and keeps the bytes across a PATCH (ETag follows the version)', async () => {
      const text = Buffer.from('Grüße, 世界\n', 'utf8');
      const document = await addDocument(owner, { content_type: 'text/plain; charset=utf-8' }, text);
      expect((await call(owner, 'PATCH', `/documents/${document.id}`, { title: 'Greetings' })).status).toBe(200);
      const res = await download(owner, document.id);
      expect(res.headers).toMatchObject({ 'content-type': 'text/plain; charset=utf-8', etag: '"1"' });
      expect(res.bytes.equals(text)).toBe(true);
    });

    it('takes content of exactly 10 MiB and gives it back byte for byte, its bytes in a content stream of their own, in none of the other events', async () => {
      const big = randomBytes(10 * MiB);
      const document = await addDocument(owner, {}, big);
      expect(document.size_bytes).toBe(10 * MiB);
      const res = await download(owner, document.id);
      expect(res.headers['content-length']).toBe(String(10 * MiB));
      expect(sha256(res.bytes)).toBe(sha256(big));

      const base64 = big.toString('base64');
      const fragments = [0, base64.length / 2, base64.length - 64].map((at) => base64.slice(at, at + 64));
      const events = await store.readAll();
      const [content, others] = [
        events.filter((e) => e.streamId.startsWith('documentcipher-')),
        events.filter((e) => !e.streamId.startsWith('documentcipher-')),
      ];
      const largest = Math.max(...others.map((e) => JSON.stringify(e.data).length + JSON.stringify(e.metadata).length));
      expect(largest).toBeLessThan(32 * 1024);
      expect(others.filter((e) => fragments.some((f) => JSON.stringify(e.data).includes(f)))).toEqual([]);
      // Chunks of at most 256 KiB of base64 each: EventStoreDB (1 MiB per append) takes them.
      const chunks = await contentChunks(document.id);
      expect(chunks.length).toBeGreaterThanOrEqual(40);
      expect(Math.max(...content.map((e) => JSON.stringify(e.data).length))).toBeLessThan(256 * 1024 + 200);
      // Encrypted: no 64-byte run of the content is in the chunks either.
      const stored = Buffer.concat(chunks.map((e) => Buffer.from(e.data.ciphertext_base64 as string, 'base64')));
      expect(stored.length).toBeGreaterThan(big.length);
      expect([0, 5 * MiB, 10 * MiB - 64].filter((at) => stored.includes(big.subarray(at, at + 64)))).toEqual([]);
      const [added] = await store.readStream(`document-${document.id}`);
      expect(added.data).toEqual({
        document_id: document.id,
        ...body(),
        content_base64: undefined,
        order_id: null,
        size_bytes: 10 * MiB,
        sha256: sha256(big),
      });
    }, 30_000);

    it('answers 404 for the content of an unknown document and 400 for a bad id', async () => {
      expectProblem(await call(owner, 'GET', `/documents/${MISSING_ID}/content`), 404);
      expectProblem(await call(owner, 'GET', '/documents/x/content'), 400, ['id']);
    });
  });

  describe('order_id', () => {
    it("keeps the order a document belongs to; an unknown or another account's order is a 400 naming order_id, appending nothing", async () => {
      const document = await addDocument(owner, { order_id: orderId.toUpperCase() });
      expect(document.order_id).toBe(orderId);
      expect((await call(owner, 'GET', `/documents/${document.id}`)).body).toEqual(document);

      const before = await store.headPosition();
      for (const order of [MISSING_ID, otherOrderId]) {
        const res = await call(owner, 'POST', '/documents', body({ order_id: order }));
        expectProblem(res, 400, ['order_id']);
        expect(res.body.errors[0].message).toContain(order);
      }
      expectProblem(
        await call(owner, 'POST', '/documents', body({ entity_id: otherEntityId, order_id: otherOrderId })),
        400,
        ['entity_id', 'order_id'],
      );
      expect(await store.headPosition()).toEqual(before);
    });
  });

  describe('list', () => {
    let lister: ProvisionedClient;
    let entities: string[];
    let orders: string[];
    let made: Document[];

    beforeAll(async () => {
      lister = await provisionAccount(service);
      entities = [];
      for (const name of ['One LLC', 'Two LLC'])
        entities.push((await create(lister, '/entities', { name, entity_type: 'llc' })).id);
      orders = [];
      for (const entity of entities)
        orders.push((await create(lister, '/orders', { entity_id: entity, order_type: 'other' })).id);
      made = [];
      // One at a time: ids are time-ordered, so this is also the list order.
      for (const [entity, order] of [
        [0, null],
        [0, 0],
        [1, 1],
        [0, 0],
        [1, null],
      ] as const) {
        made.push(
          await addDocument(lister, { entity_id: entities[entity], order_id: order === null ? null : orders[order] }),
        );
      }
    });

    const ids = (res: Answer) => res.body.data.map((d: Document) => d.id);

    it("lists the account's documents oldest first, filtered by entity_id and order_id, alone and together", async () => {
      const [a, b, c, d, e] = made.map((doc) => doc.id);
      expect(ids(await call(lister, 'GET', '/documents'))).toEqual([a, b, c, d, e]);
      expect(ids(await call(lister, 'GET', `/documents?entity_id=${entities[0]}`))).toEqual([a, b, d]);
      expect(ids(await call(lister, 'GET', `/documents?order_id=${orders[0].toUpperCase()}`))).toEqual([b, d]);
      expect(ids(await call(lister, 'GET', `/documents?entity_id=${entities[1]}&order_id=${orders[1]}`))).toEqual([c]);
      expect(ids(await call(lister, 'GET', `/documents?entity_id=${entities[1]}&order_id=${orders[0]}`))).toEqual([]);
    });

    it('pages with opaque cursors: every document once, in order, with filters kept', async () => {
      const { items, pages } = await walk<Document>(lister, '/documents', 2);
      expect(pages).toBe(3);
      expect(items.map((d) => d.id)).toEqual(made.map((d) => d.id));
      const filtered = await walk<Document>(lister, `/documents?entity_id=${entities[0]}`, 1);
      expect(filtered.items.map((d) => d.id)).toEqual([made[0], made[1], made[3]].map((d) => d.id));
    });
  });

  describe('DELETE', () => {
    it('answers 204; the document is then 404 on every route, gone from lists, and its content stream is deleted', async () => {
      const document = await addDocument(owner, { order_id: orderId }, ALL_BYTES);
      expect(await contentChunks(document.id)).toHaveLength(1);
      const res = await call(owner, 'DELETE', `/documents/${document.id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();

      const at = `/documents/${document.id}`;
      expectProblem(await call(owner, 'GET', at), 404);
      expectProblem(await call(owner, 'GET', `${at}/content`), 404);
      expectProblem(await call(owner, 'GET', `${at}/history`), 404);
      expectProblem(await call(owner, 'PATCH', at, { title: 'Back' }), 404);
      expectProblem(await call(owner, 'DELETE', at), 404);
      expectProblem(await call(owner, 'DELETE', at, undefined, { 'if-match': '"1"' }), 404);
      expect(ids(await call(owner, 'GET', `/documents?order_id=${orderId}&limit=200`))).not.toContain(document.id);
      expect(await contentChunks(document.id)).toEqual([]);
      const types = (await store.readStream(`document-${document.id}`)).map((e) => e.type);
      expect(types).toEqual(['documents.DocumentAdded', 'documents.DocumentDeleted']);
    });

    it('honours If-Match: another version is 412 and deletes nothing', async () => {
      const document = await addDocument(owner);
      expectProblem(await call(owner, 'DELETE', `/documents/${document.id}`, undefined, { 'if-match': '"1"' }), 412);
      expect((await download(owner, document.id)).status).toBe(200);
      expect((await call(owner, 'DELETE', `/documents/${document.id}`, undefined, { 'if-match': '"0"' })).status).toBe(
        204,
      );
    });

    it('is a 404 for another account, which neither deletes nor reads the document', async () => {
      const document = await addDocument(owner);
      expectProblem(await call(other, 'DELETE', `/documents/${document.id}`), 404);
      expectProblem(await call(other, 'GET', `/documents/${document.id}/content`), 404);
      expect((await call(other, 'GET', `/documents?order_id=${orderId}`)).body).toEqual({
        data: [],
        next_cursor: null,
      });
      expect((await download(owner, document.id)).bytes.equals(SMALL)).toBe(true);
    });

    const ids = (res: Answer) => res.body.data.map((d: Document) => d.id);
  });

  describe('all or nothing', () => {
    it('deletes the content it wrote and shows nothing when the DocumentAdded cannot be appended (503)', async () => {
      const before = {
        head: await store.headPosition(),
        list: (await call(owner, 'GET', '/documents?limit=200')).body,
      };
      const append = store.appendToStream.bind(store);
      const spy = jest.spyOn(store, 'appendToStream').mockImplementation(async (streamId, events, options) => {
        if (streamId.startsWith('document-')) throw new EventStoreUnavailableError('the store is down');
        return append(streamId, events, options);
      });
      try {
        const res = await call(owner, 'POST', '/documents', body({ title: 'Never stored' }, ALL_BYTES));
        expectProblem(res, 503);
      } finally {
        spy.mockRestore();
      }
      // The content was written first, then deleted again (and its key destroyed).
      expect(await contentStreamsSince(before.head)).toEqual([[expect.stringMatching(/^documentcipher-/), 0]]);
      expect((await call(owner, 'GET', '/documents?limit=200')).body).toEqual(before.list);
    });
  });

  describe('bad input', () => {
    let target: Document;
    beforeAll(async () => {
      target = await addDocument(owner, { title: 'Target' });
    });

    const id = () => target.id;
    const JSON_TYPE = { 'content-type': 'application/json' };
    const over = Buffer.alloc(10 * MiB + 1, 1).toString('base64');

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      const valid = body();
      const cases: BadInput[] = [
        ...commonBadInputs('/documents', valid, id),
        [
          'missing fields',
          'POST',
          () => '/documents',
          {},
          {},
          400,
          ['content_base64', 'content_type', 'document_type', 'entity_id', 'title'],
        ],
        [
          'wrong types',
          'POST',
          () => '/documents',
          { entity_id: 1, order_id: 2, title: 3, document_type: [], content_type: {}, content_base64: 4 },
          {},
          400,
          ['content_base64', 'content_type', 'document_type', 'entity_id', 'order_id', 'title'],
        ],
        [
          'bad UUIDs',
          'POST',
          () => '/documents',
          { ...valid, entity_id: 'acme', order_id: '1234' },
          {},
          400,
          ['entity_id', 'order_id'],
        ],
        [
          'a blank title and document type',
          'POST',
          () => '/documents',
          { ...valid, title: ' ', document_type: '' },
          {},
          400,
          ['document_type', 'title'],
        ],
        [
          'an oversize title and document type',
          'POST',
          () => '/documents',
          { ...valid, title: 't'.repeat(201), document_type: 'd'.repeat(101) },
          {},
          400,
          ['document_type', 'title'],
        ],
        ...[
          'pdf',
          'application/',
          'text/html\r\nSet-Cookie: a=b',
          'text/plain; charset',
          `application/${'x'.repeat(300)}`,
        ].map((type): BadInput => [
          `content_type ${JSON.stringify(type).slice(0, 30)}`,
          'POST',
          () => '/documents',
          { ...valid, content_type: type },
          {},
          400,
          ['content_type'],
        ]),
        ...[
          ['empty', ''],
          ['unpadded', 'QUJDRA'],
          ['with a line break', `${SMALL.toString('base64').slice(0, 8)}\n${SMALL.toString('base64').slice(8)}`],
          ['with spaces', 'QUJD RA=='],
          ['base64url', Buffer.from([251, 255, 191]).toString('base64url')],
          ['with non-zero padding bits', 'QR=='],
          ['with padding inside', 'QQ==QQ=='],
          ['with a data: prefix', `data:application/pdf;base64,${SMALL.toString('base64')}`],
          ['over 10 MiB decoded', over],
        ].map(([label, content]): BadInput => [
          `content_base64 ${label}`,
          'POST',
          () => '/documents',
          { ...valid, content_base64: content },
          {},
          400,
          ['content_base64'],
        ]),
        [
          'fields the service computes',
          'POST',
          () => '/documents',
          { ...valid, size_bytes: 1, sha256: 'a'.repeat(64), id: MISSING_ID },
          {},
          400,
          ['id', 'sha256', 'size_bytes'],
        ],
        [
          'PATCH wrong types',
          'PATCH',
          () => `/documents/${id()}`,
          { title: 5, document_type: false },
          {},
          400,
          ['document_type', 'title'],
        ],
        [
          'PATCH null',
          'PATCH',
          () => `/documents/${id()}`,
          { title: null, document_type: null },
          {},
          400,
          ['document_type', 'title'],
        ],
        [
          'PATCH an oversize title',
          'PATCH',
          () => `/documents/${id()}`,
          { title: 'x'.repeat(201) },
          {},
          400,
          ['title'],
        ],
        [
          'PATCH the content',
          'PATCH',
          () => `/documents/${id()}`,
          { content_base64: 'QQ==', content_type: 'text/plain', entity_id: entityId, order_id: orderId },
          {},
          400,
          ['content_base64', 'content_type', 'entity_id', 'order_id'],
        ],
        ['DELETE a bad UUID', 'DELETE', () => '/documents/nope', undefined, {}, 400, ['id']],
        [
          'DELETE a malformed If-Match',
          'DELETE',
          () => `/documents/${id()}`,
          undefined,
          { 'if-match': '0' },
          400,
          ['If-Match'],
        ],
        ['DELETE a stale If-Match', 'DELETE', () => `/documents/${id()}`, undefined, { 'if-match': '"9"' }, 412],
        ['content a bad UUID', 'GET', () => '/documents/0193/content', undefined, {}, 400, ['id']],
        [
          'list a bad entity_id and order_id',
          'GET',
          () => '/documents?entity_id=x&order_id=y',
          undefined,
          {},
          400,
          ['entity_id', 'order_id'],
        ],
        ['list an empty order_id', 'GET', () => '/documents?order_id=', undefined, {}, 400, ['order_id']],
        [
          'nested JSON for a string',
          'POST',
          () => '/documents',
          JSON.stringify({ ...valid, title: { $ne: '' } }),
          JSON_TYPE,
          400,
          ['title'],
        ],
      ];
      await expectRefusedWithoutEvents(service, api, owner, cases);
      expect((await call(owner, 'GET', `/documents/${target.id}`)).body).toEqual(target);
      expect((await download(owner, target.id)).bytes.equals(SMALL)).toBe(true);
    }, 30_000);
  });

  // Last: they restart the service on the same data.
  describe('restarts', () => {
    /** Closes the service, does `meanwhile` to its DATA_DIR, starts it again on the same data. */
    async function restart(meanwhile: () => void = () => {}): Promise<void> {
      await service.close();
      meanwhile();
      service = await startService({ eventStore, reuse: service });
      store = service.app.get<EventStore>(EVENT_STORE);
      // The projections may start from nothing: wait until they hold the whole stream again.
      await service.app.get(ReadYourWrites).await(await store.headPosition());
      owner = { ...owner, token: await requestToken(service.url, owner.clientId, owner.clientSecret) };
    }

    it('rebuilds the read model from the stream at a restart without losing any content, and a deleted document stays gone', async () => {
      const kept = await addDocument(owner, { title: 'Kept' }, ALL_BYTES);
      const gone = await addDocument(owner, { title: 'Gone' });
      expect((await call(owner, 'DELETE', `/documents/${gone.id}`)).status).toBe(204);

      await restart(() => {
        for (const file of ['read.db', 'read.db-wal', 'read.db-shm', 'read-models.current'])
          rmSync(join(service.dataDir, file), { force: true });
      });

      expect((await call(owner, 'GET', `/documents/${kept.id}`)).body).toEqual(kept);
      const res = await download(owner, kept.id);
      expect(res.status).toBe(200);
      expect(res.bytes.equals(ALL_BYTES)).toBe(true);
      expectProblem(await call(owner, 'GET', `/documents/${gone.id}`), 404);
      expectProblem(await call(owner, 'GET', `/documents/${gone.id}/content`), 404);
    }, 60_000);

    it('imports the bytes an earlier version kept in DATA_DIR/documents.db into the event store at the start, then renames the file', async () => {
      // A document as the earlier version recorded it: its DocumentAdded, its bytes in documents.db.
      const bytes = Buffer.from('kept by an earlier version in documents.db');
      const id = uuidv7();
      const data = {
        document_id: id,
        entity_id: entityId,
        order_id: null,
        title: 'Old',
        document_type: 'certificate',
        content_type: 'text/plain',
        size_bytes: bytes.length,
        sha256: sha256(bytes),
      };
      const metadata = buildMetadata({
        account_id: owner.accountId,
        actor: `client:${owner.clientId}`,
        correlation_id: randomUUID(),
        causation_id: null,
      });
      await store.appendToStream(`document-${id}`, [toEventData({ type: 'documents.DocumentAdded', data }, metadata)]);
      const legacyFile = join(service.dataDir, 'documents.db');
      await restart(() => {
        const db = new Database(legacyFile);
        db.exec(`CREATE TABLE document_contents (document_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, sha256 TEXT NOT NULL,
          size_bytes INTEGER NOT NULL, content BLOB NOT NULL, stored_at TEXT NOT NULL)`);
        db.prepare('INSERT INTO document_contents VALUES (?, ?, ?, ?, ?, ?)').run(
          id,
          owner.accountId,
          data.sha256,
          bytes.length,
          bytes,
          new Date().toISOString(),
        );
        db.close();
      });

      const res = await download(owner, id);
      expect([res.status, res.bytes.toString()]).toEqual([200, bytes.toString()]);
      expect(await contentChunks(id)).toHaveLength(1);
      expect([existsSync(legacyFile), existsSync(`${legacyFile}.imported`)]).toEqual([false, true]);
    }, 60_000);
  });
});

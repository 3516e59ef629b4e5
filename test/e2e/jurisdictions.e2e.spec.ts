/**
 * The jurisdictions family over real HTTP, on both event stores: the operations every family
 * shares (test/support/family.ts), then jurisdictions' own field rules, filters, pages and a table
 * of bad inputs (CONTRACT.md §2–§3).
 */
import {
  type Answer,
  type BadInput,
  commonBadInputs,
  expectProblem,
  expectRefusedWithoutEvents,
  type Resource,
  resourceApi,
} from '../support/api';
import { provisionAccount, type ProvisionedClient } from '../support/auth';
import { describeResourceFamily } from '../support/family';
import { startService, type TestService } from '../support/service';
import { EVENT_STORE, type EventStore } from '@filing/event-store';

interface Jurisdiction extends Resource {
  readonly entity_id: string;
  readonly code: string;
  readonly registration_type: string;
  readonly status: string;
}

/** A new subdivision code at each call (`US-AAA`, `US-AAB`, …): an entity registers once per jurisdiction. */
let codes = 0;
function nextCode(): string {
  const n = codes++;
  return `US-${[676, 26, 1].map((d) => String.fromCharCode(65 + (Math.floor(n / d) % 26))).join('')}`;
}

describe.each(['sqlite', 'esdb'] as const)('jurisdictions over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  let owner: ProvisionedClient;
  let other: ProvisionedClient;
  let entityId: string;
  let otherEntityId: string;
  const api = resourceApi(() => service);
  const { call, create } = api;
  const entity = async (client: ProvisionedClient) =>
    (await create(client, '/entities', { name: 'Registered LLC', entity_type: 'llc' })).id;

  beforeAll(async () => {
    service = await startService({ eventStore });
    [owner, other] = await Promise.all([provisionAccount(service), provisionAccount(service)]);
    [entityId, otherEntityId] = await Promise.all([entity(owner), entity(other)]);
  }, 60_000);
  afterAll(async () => service?.destroy());

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
      path: '/jurisdictions',
      idField: 'jurisdiction_id',
      createBody: (id) => ({ entity_id: id, code: nextCode(), registration_type: 'domestic' }),
      created: { status: 'pending' },
      changes: [{ status: 'active' }, { registration_type: 'foreign', status: 'inactive' }, { status: 'pending' }],
      eventTypes: ['JurisdictionAdded', 'JurisdictionUpdated'],
    },
  );

  describe('one registration per entity and jurisdiction', () => {
    it('answers a second registration of the entity in the same jurisdiction with 409 naming the first, appending nothing', async () => {
      const code = nextCode();
      const first = await create<Jurisdiction>(owner, '/jurisdictions', {
        entity_id: entityId,
        code,
        registration_type: 'foreign',
      });
      const before = await service.app.get<EventStore>(EVENT_STORE).headPosition();
      const again = await call(owner, 'POST', '/jurisdictions', {
        entity_id: entityId,
        code,
        registration_type: 'domestic',
      });
      expectProblem(again, 409);
      expect(again.body.detail).toContain(first.id);
      expect(await service.app.get<EventStore>(EVENT_STORE).headPosition()).toEqual(before);
      // Another entity, or another account's entity, may register there.
      expect(
        (
          await call(owner, 'POST', '/jurisdictions', {
            entity_id: await entity(owner),
            code,
            registration_type: 'domestic',
          })
        ).status,
      ).toBe(201);
      expect(
        (await call(other, 'POST', '/jurisdictions', { entity_id: otherEntityId, code, registration_type: 'domestic' }))
          .status,
      ).toBe(201);
    });
  });

  describe('field rules', () => {
    it('keeps ISO 3166-2 codes of every shape and both registration types', async () => {
      for (const [code, registration_type] of [
        ['GB-ENG', 'foreign'],
        ['FR-75', 'domestic'],
        ['CA-ON', 'foreign'],
      ]) {
        const res = await call(owner, 'POST', '/jurisdictions', { entity_id: entityId, code, registration_type });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ code, registration_type, status: 'pending' });
      }
    });

    it('moves between every status in any order', async () => {
      const j = await create<Jurisdiction>(owner, '/jurisdictions', {
        entity_id: entityId,
        code: 'US-TX',
        registration_type: 'foreign',
      });
      for (const status of ['active', 'inactive', 'active', 'pending', 'inactive']) {
        expect((await call(owner, 'PATCH', `/jurisdictions/${j.id}`, { status })).body).toMatchObject({ status });
      }
    });
  });

  describe('list', () => {
    let lister: ProvisionedClient;
    let entities: string[];
    let made: Jurisdiction[];

    beforeAll(async () => {
      lister = await provisionAccount(service);
      entities = [await entity(lister), await entity(lister)];
      made = [];
      // One at a time: ids are time-ordered, so this is also the list order.
      for (const [e, code] of [
        [0, 'US-DE'],
        [1, 'US-NY'],
        [0, 'US-CA'],
        [1, 'US-DE'],
        [0, 'GB-SCT'],
      ] as const) {
        made.push(
          await create<Jurisdiction>(lister, '/jurisdictions', {
            entity_id: entities[e],
            code,
            registration_type: 'foreign',
          }),
        );
      }
      for (const [i, status] of [
        [1, 'active'],
        [2, 'active'],
        [4, 'inactive'],
      ] as const) {
        made[i] = (await call(lister, 'PATCH', `/jurisdictions/${made[i].id}`, { status })).body;
      }
    });

    const codes = (res: Answer) => res.body.data.map((j: Jurisdiction) => j.code);

    it("lists the account's registrations oldest first, 50 by default, with next_cursor null at the end", async () => {
      const res = await call(lister, 'GET', '/jurisdictions');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: made, next_cursor: null });
    });

    it('filters by entity_id and status, alone and together', async () => {
      expect(codes(await call(lister, 'GET', `/jurisdictions?entity_id=${entities[0]}`))).toEqual([
        'US-DE',
        'US-CA',
        'GB-SCT',
      ]);
      expect(codes(await call(lister, 'GET', `/jurisdictions?entity_id=${entities[1].toUpperCase()}`))).toEqual([
        'US-NY',
        'US-DE',
      ]);
      expect(codes(await call(lister, 'GET', '/jurisdictions?status=active'))).toEqual(['US-NY', 'US-CA']);
      expect(codes(await call(lister, 'GET', '/jurisdictions?status=pending'))).toEqual(['US-DE', 'US-DE']);
      expect(codes(await call(lister, 'GET', `/jurisdictions?status=active&entity_id=${entities[0]}`))).toEqual([
        'US-CA',
      ]);
      expect(codes(await call(lister, 'GET', `/jurisdictions?status=inactive&entity_id=${entities[1]}`))).toEqual([]);
      expect(codes(await call(lister, 'GET', `/jurisdictions?entity_id=${entityId}`))).toEqual([]); // another account's entity
    });

    it('pages with opaque cursors: every registration once, in order, across pages, with and without filters', async () => {
      const all = await api.walk<Jurisdiction>(lister, '/jurisdictions', 2);
      expect(all.pages).toBe(3);
      expect(all.items).toEqual(made);
      const filtered = await api.walk<Jurisdiction>(lister, `/jurisdictions?entity_id=${entities[0]}`, 1);
      expect(filtered.items.map((j) => j.id)).toEqual([made[0].id, made[2].id, made[4].id]);
      expect(filtered.pages).toBe(3);
    });

    it('answers 400 naming each bad limit, cursor and filter', async () => {
      for (const limit of ['0', '201', 'ten', '-1', '2.5', '']) {
        expectProblem(await call(lister, 'GET', `/jurisdictions?limit=${limit}`), 400, ['limit']);
      }
      const history = await call(lister, 'GET', `/jurisdictions/${made[1].id}/history?limit=1`);
      const entitiesPage = await call(lister, 'GET', '/entities?limit=1');
      for (const cursor of ['garbage', 'eyJ2IjoxfQ', history.body.next_cursor, entitiesPage.body.next_cursor]) {
        expectProblem(await call(lister, 'GET', `/jurisdictions?cursor=${cursor}`), 400, ['cursor']);
      }
      expectProblem(await call(lister, 'GET', '/jurisdictions?status=closed&entity_id=e1&limit=0&cursor=x'), 400, [
        'cursor',
        'entity_id',
        'limit',
        'status',
      ]);
    });
  });

  describe('bad input', () => {
    let target: Jurisdiction;
    beforeAll(async () => {
      target = await create<Jurisdiction>(owner, '/jurisdictions', {
        entity_id: entityId,
        code: 'US-WY',
        registration_type: 'foreign',
      });
    });

    const id = () => target.id;
    const at = () => `/jurisdictions/${id()}`;
    const valid = () => ({ entity_id: entityId, code: 'US-DE', registration_type: 'domestic' });
    const post = (label: string, body: unknown, fields: string[]): BadInput => [
      label,
      'POST',
      () => '/jurisdictions',
      body,
      {},
      400,
      fields,
    ];
    const patch = (label: string, body: unknown, fields: string[]): BadInput => [
      label,
      'PATCH',
      at,
      body,
      {},
      400,
      fields,
    ];
    const cases = (): BadInput[] => [
      ...commonBadInputs('/jurisdictions', valid(), id),
      post('missing fields', {}, ['code', 'entity_id', 'registration_type']),
      post('wrong types', { entity_id: 5, code: ['US-DE'], registration_type: true }, [
        'code',
        'entity_id',
        'registration_type',
      ]),
      post('null fields', { entity_id: null, code: null, registration_type: null }, [
        'code',
        'entity_id',
        'registration_type',
      ]),
      post('unknown registration type', { ...valid(), registration_type: 'local' }, ['registration_type']),
      post('a bad entity UUID', { ...valid(), entity_id: 'entity-1' }, ['entity_id']),
      post('a lower-case code', { ...valid(), code: 'us-de' }, ['code']),
      post('a country without subdivision', { ...valid(), code: 'US' }, ['code']),
      post('an oversize code', { ...valid(), code: `US-${'D'.repeat(300)}` }, ['code']),
      post('a code with spaces', { ...valid(), code: ' US-DE' }, ['code']),
      post('status on create', { ...valid(), status: 'active' }, ['status']),
      post('unknown fields', { ...valid(), id: target?.id, version: 0 }, ['id', 'version']),
      patch('PATCH unknown enum values', { status: 'closed', registration_type: 'local' }, [
        'registration_type',
        'status',
      ]),
      patch('PATCH wrong types', { status: 1, registration_type: ['foreign'] }, ['registration_type', 'status']),
      patch('PATCH null', { status: null, registration_type: null }, ['registration_type', 'status']),
      patch('PATCH an oversize status', { status: 'a'.repeat(10_000) }, ['status']),
      patch('PATCH unwritable fields', { code: 'US-NY', entity_id: entityId, created_at: 'now' }, [
        'code',
        'created_at',
        'entity_id',
      ]),
      ['list a bad entity_id', 'GET', () => '/jurisdictions?entity_id=123', undefined, {}, 400, ['entity_id']],
      ['list an unknown status', 'GET', () => '/jurisdictions?status=closed', undefined, {}, 400, ['status']],
      [
        'list a repeated status',
        'GET',
        () => '/jurisdictions?status=active&status=pending',
        undefined,
        {},
        400,
        ['status'],
      ],
    ];

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      await expectRefusedWithoutEvents(service, api, owner, cases());
      expect((await call(owner, 'GET', `/jurisdictions/${target.id}`)).body).toEqual(target);
    });
  });
});

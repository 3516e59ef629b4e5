/**
 * The tasks family over real HTTP, on both event stores: the operations every family shares
 * (test/support/family.ts), then tasks' own field rules, filters, pages and a table of bad inputs
 * (CONTRACT.md §2–§3).
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

interface Task extends Resource {
  readonly entity_id: string;
  readonly title: string;
  readonly description: string | null;
  readonly due_date: string | null;
  readonly status: string;
}

describe.each(['sqlite', 'esdb'] as const)('tasks over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  let owner: ProvisionedClient;
  let other: ProvisionedClient;
  let entityId: string;
  let otherEntityId: string;
  const api = resourceApi(() => service);
  const { call, create } = api;
  const entity = async (client: ProvisionedClient) =>
    (await create(client, '/entities', { name: 'Tasked LLC', entity_type: 'llc' })).id;
  const task = (client: ProvisionedClient, fields: Record<string, unknown>) =>
    create<Task>(client, '/tasks', { entity_id: entityId, ...fields });

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
      path: '/tasks',
      idField: 'task_id',
      createBody: (id) => ({ entity_id: id, title: 'File the annual report' }),
      created: { description: null, due_date: null, status: 'open' },
      changes: [
        { status: 'completed' },
        { title: 'File the 2027 annual report', description: 'Due in spring', due_date: '2027-04-15', status: 'open' },
        { description: null, due_date: null },
      ],
      eventTypes: ['TaskCreated', 'TaskUpdated'],
    },
  );

  describe('field rules', () => {
    it('keeps a description and a due date on create, and PATCH null clears them', async () => {
      const t = await task(owner, {
        title: 'Renew the registered agent',
        description: 'Call the agent',
        due_date: '2028-02-29',
      });
      expect(t).toMatchObject({
        title: 'Renew the registered agent',
        description: 'Call the agent',
        due_date: '2028-02-29',
        status: 'open',
      });
      expect((await call(owner, 'GET', `/tasks/${t.id}`)).body).toEqual(t);
      const cleared = await call(owner, 'PATCH', `/tasks/${t.id}`, { description: null, due_date: null });
      expect(cleared.body).toMatchObject({ description: null, due_date: null, title: t.title, version: 1 });
    });

    it('accepts explicit nulls on create, an empty description, a title of 200 and a description of 5000 characters', async () => {
      expect(await task(owner, { title: 'T', description: null, due_date: null })).toMatchObject({
        description: null,
        due_date: null,
      });
      expect(await task(owner, { title: 'T', description: '' })).toMatchObject({ description: '' });
      const long = await task(owner, { title: 't'.repeat(200), description: 'd'.repeat(5000) });
      expect([long.title.length, long.description?.length]).toEqual([200, 5000]);
    });

    it('completes and reopens a task', async () => {
      const t = await task(owner, { title: 'Sign the minutes' });
      expect((await call(owner, 'PATCH', `/tasks/${t.id}`, { status: 'completed' })).body).toMatchObject({
        status: 'completed',
        version: 1,
      });
      expect((await call(owner, 'PATCH', `/tasks/${t.id}`, { status: 'open' })).body).toMatchObject({
        status: 'open',
        version: 2,
      });
    });
  });

  describe('list', () => {
    let lister: ProvisionedClient;
    let entities: string[];
    let made: Task[];

    beforeAll(async () => {
      lister = await provisionAccount(service);
      entities = [await entity(lister), await entity(lister)];
      made = [];
      // One at a time: ids are time-ordered, so this is also the list order.
      for (const [e, title] of [
        [0, 'A'],
        [1, 'B'],
        [0, 'C'],
        [1, 'D'],
        [0, 'E'],
      ] as const) {
        made.push(await create<Task>(lister, '/tasks', { entity_id: entities[e], title }));
      }
      for (const i of [1, 2])
        made[i] = (await call(lister, 'PATCH', `/tasks/${made[i].id}`, { status: 'completed' })).body;
    });

    const titles = (res: Answer) => res.body.data.map((t: Task) => t.title);

    it("lists the account's tasks oldest first, 50 by default, with next_cursor null at the end", async () => {
      const res = await call(lister, 'GET', '/tasks');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: made, next_cursor: null });
    });

    it('filters by entity_id and status, alone and together', async () => {
      expect(titles(await call(lister, 'GET', `/tasks?entity_id=${entities[0]}`))).toEqual(['A', 'C', 'E']);
      expect(titles(await call(lister, 'GET', `/tasks?entity_id=${entities[1].toUpperCase()}`))).toEqual(['B', 'D']);
      expect(titles(await call(lister, 'GET', '/tasks?status=completed'))).toEqual(['B', 'C']);
      expect(titles(await call(lister, 'GET', '/tasks?status=open'))).toEqual(['A', 'D', 'E']);
      expect(titles(await call(lister, 'GET', `/tasks?status=open&entity_id=${entities[1]}`))).toEqual(['D']);
      expect(titles(await call(lister, 'GET', `/tasks?entity_id=${entityId}`))).toEqual([]); // another account's entity
    });

    it('pages with opaque cursors: every task once, in order, across pages, with and without filters', async () => {
      const all = await api.walk<Task>(lister, '/tasks', 2);
      expect(all.pages).toBe(3);
      expect(all.items).toEqual(made);
      const open = await api.walk<Task>(lister, '/tasks?status=open', 1);
      expect(open.items.map((t) => t.title)).toEqual(['A', 'D', 'E']);
      expect(open.pages).toBe(3);
    });

    it('answers 400 naming each bad limit, cursor and filter', async () => {
      for (const limit of ['0', '201', 'ten', '-1', '2.5', '']) {
        expectProblem(await call(lister, 'GET', `/tasks?limit=${limit}`), 400, ['limit']);
      }
      const history = await call(lister, 'GET', `/tasks/${made[1].id}/history?limit=1`);
      const entitiesPage = await call(lister, 'GET', '/entities?limit=1');
      for (const cursor of ['garbage', 'eyJ2IjoxfQ', history.body.next_cursor, entitiesPage.body.next_cursor]) {
        expectProblem(await call(lister, 'GET', `/tasks?cursor=${cursor}`), 400, ['cursor']);
      }
      expectProblem(await call(lister, 'GET', '/tasks?status=done&entity_id=e1&limit=0&cursor=x'), 400, [
        'cursor',
        'entity_id',
        'limit',
        'status',
      ]);
    });
  });

  describe('bad input', () => {
    let target: Task;
    beforeAll(async () => {
      target = await task(owner, { title: 'Target', description: 'Stays as it is', due_date: '2027-01-01' });
    });

    const id = () => target.id;
    const at = () => `/tasks/${id()}`;
    const valid = () => ({ title: 'Valid task', entity_id: entityId });
    const post = (label: string, body: unknown, fields: string[]): BadInput => [
      label,
      'POST',
      () => '/tasks',
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
      ...commonBadInputs('/tasks', valid(), id),
      post('missing fields', {}, ['entity_id', 'title']),
      post('wrong types', { entity_id: 5, title: ['x'], description: 7, due_date: 20270101 }, [
        'description',
        'due_date',
        'entity_id',
        'title',
      ]),
      post('null required fields', { entity_id: null, title: null }, ['entity_id', 'title']),
      post('a blank title', { ...valid(), title: '  ' }, ['title']),
      post('an oversize title', { ...valid(), title: 't'.repeat(201) }, ['title']),
      post('an oversize description', { ...valid(), description: 'd'.repeat(5001) }, ['description']),
      post('bad due dates', { ...valid(), due_date: '2027-02-29' }, ['due_date']),
      post('a due date with a time', { ...valid(), due_date: '2027-01-01T00:00:00Z' }, ['due_date']),
      post('a bad entity UUID', { ...valid(), entity_id: 'not-a-uuid' }, ['entity_id']),
      post('status on create', { ...valid(), status: 'completed' }, ['status']),
      post('unknown fields', { ...valid(), assignee: 'me', version: 0 }, ['assignee', 'version']),
      patch('PATCH an unknown status', { status: 'done' }, ['status']),
      patch('PATCH wrong types', { title: 5, description: false, due_date: 1, status: ['open'] }, [
        'description',
        'due_date',
        'status',
        'title',
      ]),
      patch('PATCH null for required fields', { title: null, status: null }, ['status', 'title']),
      patch('PATCH a blank title', { title: '' }, ['title']),
      patch('PATCH oversize strings', { title: 't'.repeat(201), description: 'd'.repeat(5001) }, [
        'description',
        'title',
      ]),
      patch('PATCH a bad due date', { due_date: '2027-13-01' }, ['due_date']),
      patch('PATCH unwritable fields', { entity_id: entityId, created_at: 'now', completed: true }, [
        'completed',
        'created_at',
        'entity_id',
      ]),
      ['list a bad entity_id', 'GET', () => '/tasks?entity_id=0193a5b2', undefined, {}, 400, ['entity_id']],
      ['list an unknown status', 'GET', () => '/tasks?status=done', undefined, {}, 400, ['status']],
    ];

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      await expectRefusedWithoutEvents(service, api, owner, cases());
      expect((await call(owner, 'GET', `/tasks/${target.id}`)).body).toEqual(target);
    });
  });
});

/**
 * A sixth family from a declaration alone (docs/resource-conventions.md, "Adding a family"):
 * `notes`, declared in test/support/notes.family.ts and added to the service as one module, gets
 * its routes, its events, its projection and its OpenAPI entries, and passes the operations every
 * family shares (test/support/family.ts), on both event stores.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ProjectionRunner, ReadYourWrites } from '@filing/platform';
import { commonBadInputs, expectProblem, expectRefusedWithoutEvents } from '../support/api';
import { describeResourceFamily, familyFixture } from '../support/family';
import { NOTE_CREATED, NOTE_UPDATED, NotesModule } from '../support/notes.family';

describe.each(['sqlite', 'esdb'] as const)('a family declared in a test (notes) on the %s store', (eventStore) => {
  const env = familyFixture(eventStore, [NotesModule]);
  const { api } = env;

  describeResourceFamily(env, {
    path: '/notes',
    idField: 'note_id',
    createBody: (id) => ({ entity_id: id, title: 'Call the registered agent' }),
    created: { body: null },
    changes: [
      { title: 'Call the agent again' },
      { title: 'Agent called', body: 'They will send the certificate' },
      { body: null },
    ],
    eventTypes: ['NoteCreated', 'NoteUpdated'],
  });

  it("records its events in its own stream, and its projection is the runner's", async () => {
    const note = await api.create(env.owner(), '/notes', { entity_id: env.entityId(), title: 'Stream me' });
    await api.call(env.owner(), 'PATCH', `/notes/${note.id}`, { body: 'Now with a body' });
    const events = await env.service().app.get<EventStore>(EVENT_STORE).readStream(`note-${note.id}`);
    expect(events.map((e) => [e.type, e.data.note_id, e.metadata.account_id])).toEqual([
      [NOTE_CREATED, note.id, env.owner().accountId],
      [NOTE_UPDATED, note.id, env.owner().accountId],
    ]);
    expect(
      env
        .service()
        .app.get(ProjectionRunner)
        .registered.map((p) => p.name),
    ).toContain('notes');
  });

  it('answers a write its read model has not reached yet from the command, as GET answers it later', async () => {
    const runner = env.service().app.get(ProjectionRunner);
    await runner.stop();
    // The bounded read-your-writes wait, run out: the row is not there when the answer is made.
    const wait = jest.spyOn(env.service().app.get(ReadYourWrites), 'await').mockResolvedValue(undefined);
    let created;
    try {
      created = await api.call(env.owner(), 'POST', '/notes', { entity_id: env.entityId(), title: 'Ahead of its row' });
    } finally {
      wait.mockRestore();
      await runner.start();
    }
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(await runner.waitFor(await runner.headPosition(), 10_000)).toBe(true);
    const got = await api.call(env.owner(), 'GET', `/notes/${created.body.id}`);
    expect(created.body).toEqual(got.body);
    expect(created.headers.etag).toBe(got.headers.etag);
    expect(created.headers.location).toBe(`/external-api/v1/notes/${created.body.id}`);
  });

  it('has its operations, resource and bodies in the OpenAPI document, with the shared answers', async () => {
    const res = await fetch(`${env.service().url}/external-api/v1/openapi.json`);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const ops = (path: string) =>
      Object.fromEntries(
        Object.entries(doc.paths[`/external-api/v1${path}`] ?? {}).map(([m, op]) => [m, op.operationId]),
      );
    expect(ops('/notes')).toEqual({ get: 'NotesController_list', post: 'NotesController_create' });
    expect(ops('/notes/{id}')).toEqual({ get: 'NotesController_get', patch: 'NotesController_update' });
    expect(ops('/notes/{id}/history')).toEqual({ get: 'NotesController_history' });
    const { schemas } = doc.components;
    expect(Object.keys(schemas.NoteDto.properties)).toEqual([
      'id',
      'entity_id',
      'title',
      'body',
      'created_at',
      'updated_at',
      'version',
    ]);
    expect(Object.keys(schemas.CreateNoteDto.properties)).toEqual(['entity_id', 'title', 'body']);
    expect(Object.keys(schemas.UpdateNoteDto.properties)).toEqual(['title', 'body']);
    // The errors every operation declares come with it (If-Match's 412, Idempotency-Key's 422, ...).
    expect(Object.keys(doc.paths['/external-api/v1/notes/{id}'].patch.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '409', '412', '413', '415', '429', '503']),
    );
    expect(Object.keys(doc.paths['/external-api/v1/notes'].post.responses)).toEqual(
      expect.arrayContaining(['201', '409', '422']),
    );
  });

  it('refuses bad input with a 4xx problem naming the fields, appending nothing', async () => {
    const target = await api.create(env.owner(), '/notes', { entity_id: env.entityId(), title: 'Target' });
    const valid = { entity_id: env.entityId(), title: 'Valid' };
    await expectRefusedWithoutEvents(env.service(), api, env.owner(), [
      ...commonBadInputs('/notes', valid, () => target.id),
      ['fields missing', 'POST', () => '/notes', {}, {}, 400, ['entity_id', 'title']],
      [
        'a blank title, a long body',
        'POST',
        () => '/notes',
        { ...valid, title: ' ', body: 'b'.repeat(2001) },
        {},
        400,
        ['title', 'body'],
      ],
      ['an unknown field', 'POST', () => '/notes', { ...valid, pinned: true }, {}, 400, ['pinned']],
      ['a null title', 'PATCH', () => `/notes/${target.id}`, { title: null }, {}, 400, ['title']],
      ['a filter it does not have', 'GET', () => '/notes?status=open', undefined, {}, 400, ['status']],
    ]);
    expectProblem(await api.call(env.owner(), 'GET', `/notes?entity_id=${env.entityId().toUpperCase()}&limit=0`), 400, [
      'limit',
    ]);
  });
});

import { EVENT_STORE, SqliteEventStore } from '@filing/event-store';
import { CommandBus, CqrsModule } from '@nestjs/cqrs';
import { Test } from '@nestjs/testing';
import { ConflictError, NotFoundError, ValidationError } from '../errors/domain-errors';
import type { CommandContext, DomainEvent, RecordedEnvelope } from '../events/envelope';
import type { ReadYourWrites } from '../http/read-your-writes';
import { ReferenceChecker } from '../http/references';
import { defineAggregate, expectedVersion, newResourceId, requireAccount } from './define-aggregate';

// A tiny family: a note about an entity, created, then renamed.
type NoteEvent = DomainEvent<
  'notes.NoteCreated' | 'notes.NoteRenamed',
  { note_id: string; entity_id: string; title: string }
>;
interface Note {
  readonly id: string;
  readonly account_id: string;
  readonly entity_id: string;
  readonly title: string;
}
type NoteCommand =
  | { kind: 'create'; id: string; account_id: string; input: { entity_id: string; title: string } }
  | { kind: 'rename'; id: string; account_id: string; title: string };

const evolve = (state: Note | null, e: RecordedEnvelope<NoteEvent>): Note | null =>
  e.type === 'notes.NoteCreated'
    ? { id: e.data.note_id, account_id: e.metadata.account_id!, entity_id: e.data.entity_id, title: e.data.title }
    : state && { ...state, title: e.data.title };

function decide(state: Note | null, command: NoteCommand): NoteEvent[] {
  if (command.kind === 'create') {
    if (state) throw new ConflictError('exists');
    return [{ type: 'notes.NoteCreated', data: { note_id: command.id, ...command.input } }];
  }
  if (!state || state.account_id !== command.account_id) throw NotFoundError.of('note', command.id);
  if (state.title === command.title) return [];
  return [{ type: 'notes.NoteRenamed', data: { note_id: state.id, entity_id: state.entity_id, title: command.title } }];
}

const Notes = defineAggregate({
  streamPrefix: 'note',
  initialState: null as Note | null,
  evolve,
  decide,
  schemaVersions: { 'notes.NoteRenamed': 2 },
  references: ['entity_id'],
});

const customer: CommandContext = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r1', causation_id: null };
const operator: CommandContext = { account_id: null, actor: 'operator:o1', correlation_id: 'r2', causation_id: null };
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';

describe('defineAggregate', () => {
  let store: SqliteEventStore;
  beforeEach(() => (store = new SqliteEventStore({ file: ':memory:', pollIntervalMs: 20 })));
  afterEach(() => store.close());

  it('runs load → decide → append on `<prefix>-<id>` and answers one WriteResult with the resource after it', async () => {
    const created = await Notes.run(store, customer, {
      kind: 'create',
      id: 'n1',
      account_id: 'acc-1',
      input: { entity_id: 'e1', title: 'A' },
    });
    expect(created).toEqual({
      position: await store.headPosition(),
      resource: { id: 'n1', account_id: 'acc-1', entity_id: 'e1', title: 'A' },
    });
    const renamed = await Notes.run(store, customer, { kind: 'rename', id: 'n1', account_id: 'acc-1', title: 'B' });
    expect(renamed.resource.title).toBe('B');
    const events = await store.readStream(Notes.streamId('n1'));
    expect(Notes.streamId('n1')).toBe('note-n1');
    expect(events.map((e) => [e.type, e.metadata.schema_version, e.metadata.actor])).toEqual([
      ['notes.NoteCreated', 1, 'client:c1'],
      ['notes.NoteRenamed', 2, 'client:c1'],
    ]);
    expect(await Notes.load(store, 'n1')).toEqual({ state: renamed.resource, revision: 1n });
  });

  it('answers a command that changes nothing with the resource as it is and no position', async () => {
    await Notes.run(store, customer, {
      kind: 'create',
      id: 'n1',
      account_id: 'acc-1',
      input: { entity_id: 'e1', title: 'A' },
    });
    const result = await Notes.run(store, customer, { kind: 'rename', id: 'n1', account_id: 'acc-1', title: 'A' });
    expect(result).toEqual({ position: null, resource: expect.objectContaining({ title: 'A' }) });
  });

  describe('through the CommandBus', () => {
    let commands: CommandBus;
    const entities = new Set([`acc-1/${ENTITY}`]);

    beforeEach(async () => {
      const references = new ReferenceChecker({ await: async () => undefined } as unknown as ReadYourWrites, store);
      references.register('entity', (account, id) => entities.has(`${account}/${id}`));
      const app = await Test.createTestingModule({
        imports: [CqrsModule.forRoot()],
        providers: [
          Notes.Handler,
          { provide: EVENT_STORE, useValue: store },
          { provide: ReferenceChecker, useValue: references },
        ],
      }).compile();
      await app.init();
      commands = app.get(CommandBus);
    });

    it("runs in the context's account, with the references lower-cased once they exist", async () => {
      const id = newResourceId();
      const result = await commands.execute(
        Notes.command(customer, { kind: 'create', id, input: { entity_id: ENTITY.toUpperCase(), title: 'A' } }),
      );
      expect(result.resource).toEqual({ id, account_id: 'acc-1', entity_id: ENTITY, title: 'A' });
      const renamed = await commands.execute(Notes.command(customer, { kind: 'rename', id, title: 'B' }));
      expect(renamed.resource.title).toBe('B');
    });

    it('refuses a reference missing from the account, naming it, and appends nothing', async () => {
      const command = Notes.command(
        { ...customer, account_id: 'acc-2' },
        { kind: 'create', id: newResourceId(), input: { entity_id: ENTITY, title: 'A' } },
      );
      await expect(commands.execute(command)).rejects.toThrow(ValidationError);
      expect(await store.headPosition()).toBeNull();
    });

    it('refuses a context without an account (an operator) as a bug, not as bad input', async () => {
      await expect(commands.execute(Notes.command(operator, { kind: 'rename', id: 'n1', title: 'B' }))).rejects.toThrow(
        /account/,
      );
      expect(() => requireAccount(operator)).toThrow(/account/);
    });
  });

  it('makes UUID v7 ids in creation order, and reads If-Match as a version', () => {
    const [a, b] = [newResourceId(), newResourceId()];
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
    expect([expectedVersion(undefined), expectedVersion(3n)]).toEqual([undefined, 3]);
  });
});

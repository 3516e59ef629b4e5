import type { EventStore, Position } from '@filing/event-store';
import { ValidationError } from '../errors/domain-errors';
import type { ReadYourWrites } from './read-your-writes';
import { ReferenceChecker } from './references';

describe('ReferenceChecker', () => {
  const head: Position = { commit: 5n, prepare: 5n };
  let rows: Set<string>;
  let awaited: Array<Position | null>;
  let checker: ReferenceChecker;

  beforeEach(() => {
    rows = new Set(['acc-1/e1', 'acc-1/o1']);
    awaited = [];
    const readYourWrites = { await: async (p: Position | null) => void awaited.push(p) } as unknown as ReadYourWrites;
    const store = { headPosition: async () => head } as unknown as EventStore;
    checker = new ReferenceChecker(readYourWrites, store);
    checker.register('entity', (acc, id) => rows.has(`${acc}/e${id.slice(1)}`));
    checker.register('order', (acc, id) => rows.has(`${acc}/o${id.slice(1)}`));
  });

  const fieldsOf = async (promise: Promise<void>) => {
    try {
      await promise;
      return [];
    } catch (err) {
      if (err instanceof ValidationError) return err.errors.map((e) => e.field);
      throw err;
    }
  };

  it('passes existing references of the account without waiting for the projections', async () => {
    await checker.assertExist('acc-1', { entity_id: 'e1', order_id: 'o1' });
    expect(awaited).toEqual([]);
  });

  it('skips absent optional references', async () => {
    await checker.assertExist('acc-1', { entity_id: 'e1', order_id: null });
    await checker.assertExist('acc-1', { entity_id: 'e1', order_id: undefined });
  });

  it('lists every missing or foreign reference in one 400, after catching up with the store head', async () => {
    expect(await fieldsOf(checker.assertExist('acc-2', { entity_id: 'e1', order_id: 'o9' }))).toEqual([
      'entity_id',
      'order_id',
    ]);
    expect(awaited).toEqual([head]);
  });

  it('finds a reference that the projections reach while it waits', async () => {
    checker = new ReferenceChecker(
      { await: async () => void rows.add('acc-1/e7') } as unknown as ReadYourWrites,
      { headPosition: async () => head } as unknown as EventStore,
    );
    checker.register('entity', (acc, id) => rows.has(`${acc}/e${id.slice(1)}`));
    await expect(checker.assertExist('acc-1', { entity_id: 'e7' })).resolves.toBeUndefined();
  });

  it('answers the input with its references lower-cased once they exist, leaving other fields and absent ones alone', async () => {
    rows.add('acc-1/eab');
    const input = { entity_id: 'EAB', order_id: null, title: 'Keep Me' };
    expect(await checker.normalized('acc-1', input, ['entity_id', 'order_id'])).toEqual({
      entity_id: 'eab',
      order_id: null,
      title: 'Keep Me',
    });
    expect(await fieldsOf(checker.normalized('acc-2', input, ['entity_id']).then(() => undefined))).toEqual([
      'entity_id',
    ]);
  });

  it('refuses a second lookup for one kind', () => {
    expect(() => checker.register('entity', () => true)).toThrow(/already registered/);
  });
});

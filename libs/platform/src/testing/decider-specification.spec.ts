import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from '../errors/domain-errors';
import type { DomainEvent, RecordedEnvelope } from '../events/envelope';
import {
  DeciderSpecification,
  expectOwnershipBeforeIfMatch,
  resourceCommands,
  resourceEvents,
} from './decider-specification';
import { recorded } from './domain';

// A counter per account: opened, then added to.
type Opened = DomainEvent<'c.Opened', { n: number }>;
type Added = DomainEvent<'c.Added', { n: number }>;
type CounterEvent = Opened | Added;
type Counter = { total: number; account: string; version: number; at: string } | null;
type Command = { kind: 'open' } | { kind: 'add'; n: unknown };

const evolve = (s: Counter, e: RecordedEnvelope<CounterEvent>): Counter => ({
  total: (s?.total ?? 0) + e.data.n,
  account: s?.account ?? e.metadata.account_id!,
  version: Number(e.revision),
  at: e.metadata.occurred_at,
});
function decide(s: Counter, c: Command): CounterEvent[] {
  if (c.kind === 'open') {
    if (s) throw new ConflictError('open already');
    return [{ type: 'c.Opened', data: { n: 0 } }];
  }
  if (typeof c.n !== 'number') throw ValidationError.field('n', 'n must be a number');
  return c.n === 0 ? [] : [{ type: 'c.Added', data: { n: c.n } }];
}

const given = DeciderSpecification.for(
  { decide, evolve, initialState: null as Counter },
  { streamId: 'counter-1', accountId: 'acc-9' },
);
const opened: Opened = { type: 'c.Opened', data: { n: 0 } };
const added = (n: number): Added => ({ type: 'c.Added', data: { n } });

describe('DeciderSpecification', () => {
  it('passes when decide answers as the spec says', () => {
    given([]).when({ kind: 'open' }).then([opened]);
    given(opened).when({ kind: 'add', n: 2 }).then(added(2));
    given([opened, added(2)])
      .when({ kind: 'add', n: 0 })
      .thenNothingHappened();
    given([opened])
      .when({ kind: 'open' })
      .thenThrows(ConflictError, (e) => expect(e.message).toBe('open already'));
    given([opened]).when({ kind: 'add', n: 'x' }).thenInvalid(['n']);
    given([opened])
      .when({ kind: 'add', n: 3 })
      .then((events) => expect(events).toHaveLength(1));
  });

  it('folds the given events at revisions 0, 1… in the account, and the decided ones after them', () => {
    given([opened, added(2)])
      .when({ kind: 'add', n: 3 })
      .thenState({ total: 5, account: 'acc-9', version: 2, at: '2026-01-01T00:00:00.000Z' });
    given([opened])
      .when({ kind: 'add', n: 1 })
      .thenState((s) => expect(s?.at).toBe('2026-03-01T00:00:00.000Z'), '2026-03-01T00:00:00.000Z');
    // A given event already recorded keeps its own account and time.
    const foreign = recorded(opened, {
      streamId: 'counter-1',
      revision: 0,
      accountId: 'acc-2',
      occurredAt: '2025-01-01T00:00:00.000Z',
    });
    given([foreign])
      .when({ kind: 'add', n: 0 })
      .thenState({ total: 0, account: 'acc-2', version: 0, at: '2025-01-01T00:00:00.000Z' });
  });

  it('fails when decide answers otherwise', () => {
    expect(() =>
      given([])
        .when({ kind: 'open' })
        .then([added(1)]),
    ).toThrow();
    expect(() => given([]).when({ kind: 'open' }).thenNothingHappened()).toThrow();
    expect(() => given([opened]).when({ kind: 'add', n: 1 }).thenThrows(ConflictError)).toThrow();
    expect(() => given([opened]).when({ kind: 'open' }).thenThrows(ValidationError)).toThrow();
    expect(() => given([opened]).when({ kind: 'add', n: 'x' }).thenInvalid(['m'])).toThrow();
    expect(() => given([opened]).when({ kind: 'open' }).thenInvalid(['n'])).toThrow();
    expect(() =>
      given([opened])
        .when({ kind: 'add', n: 1 })
        .thenState({ total: 2, account: 'acc-9', version: 1, at: '2026-01-01T00:00:00.000Z' }),
    ).toThrow();
  });
});

describe('expectOwnershipBeforeIfMatch', () => {
  type Owned = { account: string; version: number } | null;
  type Touch = { kind: 'touch'; account_id: string; expected_version?: number };
  const opened: Opened = { type: 'c.Opened', data: { n: 0 } };
  const evolveOwned = (s: Owned, e: RecordedEnvelope<Opened>): Owned => ({
    account: s?.account ?? e.metadata.account_id!,
    version: Number(e.revision),
  });
  const touch = (account: string, expected_version?: number): Touch => ({
    kind: 'touch',
    account_id: account,
    expected_version,
  });
  const deciders = {
    conventional: (s: Owned, c: Touch): Opened[] => {
      if (!s || s.account !== c.account_id) throw new NotFoundError();
      if (c.expected_version !== undefined && c.expected_version !== s.version) throw new PreconditionFailedError();
      return [];
    },
    versionFirst: (s: Owned, c: Touch): Opened[] => {
      if (s && c.expected_version !== undefined && c.expected_version !== s.version)
        throw new PreconditionFailedError();
      return deciders.conventional(s, c);
    },
    noIfMatch: (s: Owned, c: Touch): Opened[] => {
      return deciders.conventional(s, { ...c, expected_version: undefined });
    },
  };
  const givenFor = (decide: (s: Owned, c: Touch) => Opened[]) =>
    DeciderSpecification.for({ decide, evolve: evolveOwned, initialState: null as Owned }, { accountId: 'acc-1' });

  it('passes a decider that checks ownership, then If-Match', () => {
    expectOwnershipBeforeIfMatch(givenFor(deciders.conventional), [opened], touch, { owner: 'acc-1', version: 0 });
  });

  it('fails one that tells another account about the version, or ignores If-Match', () => {
    expect(() =>
      expectOwnershipBeforeIfMatch(givenFor(deciders.versionFirst), [opened], touch, { owner: 'acc-1', version: 0 }),
    ).toThrow();
    expect(() =>
      expectOwnershipBeforeIfMatch(givenFor(deciders.noIfMatch), [opened], touch, { owner: 'acc-1', version: 0 }),
    ).toThrow();
  });

  it('builds the created and updated events of a resource', () => {
    const { created, updated } = resourceEvents<DomainEvent>(
      { created: 'x.Made', updated: 'x.Changed' },
      { x_id: 'r1' },
      { a: 1, b: 2 },
    );
    expect(created).toEqual({ type: 'x.Made', data: { x_id: 'r1', a: 1, b: 2 } });
    expect(updated({ b: 3 })).toEqual({ type: 'x.Changed', data: { x_id: 'r1', a: 1, b: 3, changed: ['b'] } });
  });

  it('builds create and PATCH commands for one resource', () => {
    const { create, update } = resourceCommands<unknown>('r1', 'acc-1', 'add');
    expect(create({ a: 1 })).toEqual({ kind: 'add', id: 'r1', account_id: 'acc-1', input: { a: 1 } });
    expect(update({ a: 2 }, 'acc-2', 3)).toEqual({
      kind: 'update',
      id: 'r1',
      account_id: 'acc-2',
      changes: { a: 2 },
      expected_version: 3,
    });
  });
});

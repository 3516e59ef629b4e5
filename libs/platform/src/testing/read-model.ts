import Database from 'better-sqlite3';
import type { DomainEvent } from '../events/envelope';
import { CursorCodec } from '../http/cursor-codec';
import type { Page, PageRequest } from '../http/page.dto';
import type { Projection } from '../projections/projection';
import type { ProjectionRunner } from '../projections/projection-runner';
import { recorded } from './domain';

/** What a family's read-model spec needs of its queries. */
interface Lists<V> {
  list(accountId: string, filters: object, page: PageRequest<string>): Page<V>;
  /** When the queries answer stored JSON too (ResourceQueries), every page checks it against `list`, and `getJson` against `get`. */
  listJson?(accountId: string, filters: object, page: PageRequest<string>): Buffer;
  get?(accountId: string, id: string): V | null;
  getJson?(accountId: string, id: string): { readonly version: number; readonly json: string } | null;
}

export interface RecordedAs {
  readonly accountId: string;
  /** The event's revision in its resource's stream (default 0: the creation). */
  readonly revision?: number;
  readonly occurredAt?: string;
}

/** A family's projection on an in-memory database, and its queries reading it. */
export interface ReadModelFixture<Q> {
  readonly db: Database.Database;
  readonly queries: Q;
  readonly cursors: CursorCodec;
  /** Applies `event` as the store would hand it over, at the next global position. */
  apply(event: DomainEvent, as: RecordedAs): void;
  /** One page of the account's list. */
  page(accountId: string, filters?: object, limit?: number, after?: string | null): Page<{ readonly id: string }>;
  /** The ids of that page. */
  ids(accountId: string, filters?: object, limit?: number, after?: string | null): string[];
  /** Asserts that the account's list is `ids`, oldest first, in pages of `limit` chained by cursors of this collection. */
  expectPages(accountId: string, ids: readonly string[], limit: number): void;
  close(): void;
}

/**
 * `readModelFixture(new TasksProjection(), (runner) => new TasksQueries(runner))` in a
 * `beforeEach`, `fixture.close()` in the `afterEach`.
 */
export function readModelFixture<Q extends Lists<{ readonly id: string }>>(
  projection: Projection,
  queriesOf: (runner: ProjectionRunner) => Q,
): ReadModelFixture<Q> {
  const db = new Database(':memory:');
  projection.setup(db);
  const queries = queriesOf({ db } as unknown as ProjectionRunner);
  const cursors = CursorCodec.random();
  let position = 0;
  const page = (accountId: string, filters = {}, limit = 50, after: string | null = null) => {
    const request = { limit, after, cursors };
    const answer = queries.list(accountId, filters, request);
    // The stored answers are byte for byte what serialising the rows gives.
    if (queries.listJson) expect(queries.listJson(accountId, filters, request).toString()).toBe(JSON.stringify(answer));
    for (const { id } of queries.getJson ? answer.data : []) {
      expect(queries.getJson!(accountId, id)?.json).toBe(JSON.stringify(queries.get!(accountId, id)));
    }
    return answer;
  };
  return {
    db,
    queries,
    cursors,
    apply: (event, { accountId, revision = 0, occurredAt }) =>
      projection.apply(
        db,
        recorded(event, {
          streamId: `${projection.name}-stream`,
          revision,
          occurredAt,
          accountId,
          position: position++,
        }),
      ),
    page,
    ids: (...args) => page(...args).data.map((item) => item.id),
    expectPages(accountId, ids, limit) {
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 1; ; pages++) {
        const { data, next_cursor } = page(accountId, {}, limit, after);
        seen.push(...data.map((item) => item.id));
        if (next_cursor === null) {
          expect(pages).toBe(Math.max(1, Math.ceil(ids.length / limit)));
          break;
        }
        expect(data).toHaveLength(limit);
        expect(cursors.decode(next_cursor)).toMatchObject({ c: projection.name, k: seen[seen.length - 1] });
        after = seen[seen.length - 1];
      }
      expect(seen).toEqual(ids);
    },
    close: () => db.close(),
  };
}

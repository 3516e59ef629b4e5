import type Database from 'better-sqlite3';
import type { RecordedEnvelope } from '../events/envelope';

/**
 * A read model kept in `DATA_DIR/read.db`. Everything in it can be rebuilt from the stream, so
 * changing its shape is a `version` bump, never a migration.
 */
export interface Projection {
  /** Unique; keys the checkpoint row. */
  readonly name: string;
  /** Bump it when the tables or the meaning of `apply` change: the runner drops and rebuilds. */
  readonly version: number;
  /** Every table `setup` creates: what a rebuild drops. */
  readonly tables: readonly string[];
  /** `CREATE TABLE IF NOT EXISTS …` (and indexes). Runs at every start. */
  setup(db: Database.Database): void;
  /** Event type prefixes (`orders.`, `entities.EntityCreated`) or a predicate on the type. */
  readonly handles: readonly string[] | ((eventType: string) => boolean);
  /**
   * Synchronous, inside the runner's transaction (with the checkpoint): throwing rolls the batch
   * back and stops the runner. Must be deterministic: a rebuild must give the same rows.
   */
  apply(db: Database.Database, event: RecordedEnvelope): void;
  /**
   * At the start of each batch's transaction, inside it, before any `apply`: a projection that
   * keeps rows in memory for the batch starts it empty (a rolled-back batch left it stale).
   * `rebuild`: a bulk rebuild, where any failure fails the whole run (no projection is halted
   * alone), so rows may wait for `endBatch` even when writing them can fail.
   */
  beginBatch?(db: Database.Database, batch: { readonly rebuild: boolean }): void;
  /**
   * At the end of each batch's transaction, inside it, after the last `apply`: writes what the
   * projection kept back during the batch (e.g. a row many of its events change), so it commits
   * with the batch's checkpoint.
   */
  endBatch?(db: Database.Database): void;
  /** After each batch's transaction has committed: for hints (waking a worker), never for rows. */
  afterCommit?(): void;
  /**
   * True when `apply` finds rows by primary key or unique index alone: a rebuild then creates
   * the tables' other indexes once, after the load, instead of updating them row by row.
   */
  readonly indexesAfterLoad?: boolean;
  /**
   * Projections this one replaced (no longer registered), with the tables they created: where a
   * read model still holds one, its tables and checkpoint are dropped and this one is rebuilt.
   */
  readonly supersedes?: readonly SupersededProjection[];
  /**
   * Which requests read this read model, so that while it is halted they answer a 503 naming it
   * (and nothing else does): request path prefixes, or `authentication` for a read model that
   * every authenticated request depends on (fail closed). Default: the collection named like the
   * projection in both APIs (`orders` → `/external-api/v1/orders`, `/internal-api/v1/orders`).
   */
  readonly serves?: readonly string[] | 'authentication';
}

/** The request path prefixes a projection serves (see `Projection.serves`). */
export function servedPaths(projection: Pick<Projection, 'name' | 'serves'>): readonly string[] | 'authentication' {
  if (projection.serves) return projection.serves;
  if (!/^[a-z-]+$/.test(projection.name)) return [];
  return [`/external-api/v1/${projection.name}`, `/internal-api/v1/${projection.name}`];
}

/** A projection no longer registered, as a read model made before may still hold it. */
export interface SupersededProjection {
  readonly name: string;
  readonly tables: readonly string[];
}

export function projectionHandles(projection: Projection, eventType: string): boolean {
  const { handles } = projection;
  return typeof handles === 'function' ? handles(eventType) : handles.some((prefix) => eventType.startsWith(prefix));
}

/**
 * Throws unless `projection` may join `registered`: a unique name, not superseded by another,
 * handling none of the event types the head barrier skips.
 */
export function assertRegistrable(
  registered: readonly Projection[],
  projection: Projection,
  headSkipsTypes: readonly string[],
): void {
  if (registered.some((p) => p.name === projection.name)) {
    throw new Error(`Duplicate projection name ${projection.name}`);
  }
  const superseded = [...registered, projection].flatMap((p) => p.supersedes ?? []).map((s) => s.name);
  const clash = [...registered, projection].find((p) => superseded.includes(p.name));
  if (clash) throw new Error(`Projection ${clash.name} is registered and superseded`);
  const skipped = headSkipsTypes.find((type) => projectionHandles(projection, type));
  if (skipped) throw new Error(`Projection ${projection.name} handles ${skipped}, which the head barrier skips`);
}

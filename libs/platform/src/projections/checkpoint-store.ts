import { comparePositions, parsePosition, positionToString, type Position } from '@filing/event-store';
import type { LoggerService } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { Projection } from './projection';
import { cachedStatement } from './statements';

export type Checkpoints = ReadonlyMap<string, Position | null>;

type Row = { version: number; position: string | null };

const SAVE_CHECKPOINT = 'UPDATE projection_checkpoints SET position = ? WHERE name = ?';

/**
 * Each projection's checkpoint (the position of the last event it applied, null before the
 * first), kept in the read database's `projection_checkpoints` table, which a batch writes in
 * the same transaction as its rows, and mirrored here once the batch has committed.
 */
export class CheckpointStore {
  private positions = new Map<string, Position | null>();

  constructor(private readonly logger: Pick<LoggerService, 'log'>) {}

  /** The committed checkpoints. */
  get current(): Checkpoints {
    return this.positions;
  }

  get(name: string): Position | null {
    return this.positions.get(name) ?? null;
  }

  /** A batch committed: its checkpoints are the current ones. */
  commit(next: Map<string, Position | null>): void {
    this.positions = next;
  }

  /** Another read database is swapped in: its checkpoints are read at the next `load`. */
  forget(): void {
    this.positions = new Map();
  }

  /** The lowest checkpoint of `projections`; null when one has applied nothing yet. */
  lowest(projections: readonly Pick<Projection, 'name'>[]): Position | null {
    let lowest: Position | null = null;
    for (const p of projections) {
      const cp = this.get(p.name);
      if (cp === null) return null;
      if (lowest === null || comparePositions(cp, lowest) < 0) lowest = cp;
    }
    return lowest;
  }

  /** Every one of `projections` has reached `position`. */
  reached(projections: readonly Pick<Projection, 'name'>[], position: Position): boolean {
    return projections.every((p) => {
      const cp = this.get(p.name);
      return cp !== null && comparePositions(cp, position) >= 0;
    });
  }

  /**
   * One transaction: creates each projection's tables (dropping and rebuilding those whose
   * version changed or that replace a superseded one) and reads its checkpoint. `inside` runs
   * last, in the same transaction.
   */
  load(db: Database.Database, projections: readonly Projection[], inside?: () => void): void {
    const get = db.prepare<[string], Row>('SELECT version, position FROM projection_checkpoints WHERE name = ?');
    db.transaction(() => {
      for (const p of projections) {
        const row = this.prepareOne(db, p, get);
        this.positions.set(p.name, row?.position ? parsePosition(row.position) : null);
      }
      inside?.();
    }).immediate();
  }

  /** Drops every projection's tables and checkpoint. */
  resetAll(db: Database.Database, projections: readonly Projection[]): void {
    db.transaction(() => {
      for (const p of projections) this.reset(db, p);
    }).immediate();
    this.positions.clear();
  }

  /** Within a batch's transaction: writes the checkpoints of `active` that moved. */
  save(db: Database.Database, next: Checkpoints, active: readonly Pick<Projection, 'name'>[]): void {
    const save = cachedStatement(db, SAVE_CHECKPOINT);
    for (const p of active) {
      const cp = next.get(p.name) ?? null;
      if (cp !== null && cp !== this.positions.get(p.name)) save.run(positionToString(cp), p.name);
    }
  }

  /** Makes `p`'s tables; its checkpoint row, or undefined when it starts from nothing. */
  private prepareOne(db: Database.Database, p: Projection, get: Database.Statement<[string], Row>): Row | undefined {
    let row = get.get(p.name);
    const retired = this.retireSuperseded(db, p, get);
    if (row && (retired.length > 0 || row.version !== p.version)) {
      const why = retired.length > 0 ? `supersedes ${retired.join(', ')}` : `version ${row.version} → ${p.version}`;
      this.logger.log(`Projection ${p.name}: ${why}, rebuilding`);
      this.reset(db, p);
      row = undefined;
    }
    p.setup(db);
    if (!row) {
      db.prepare('INSERT INTO projection_checkpoints (name, version, position) VALUES (?, ?, NULL)').run(
        p.name,
        p.version,
      );
    }
    return row;
  }

  /**
   * Drops the tables and checkpoint of each projection `p` supersedes that this read model still
   * holds; returns their names. Its tables may now be `p`'s, so `p` is then rebuilt too.
   */
  private retireSuperseded(db: Database.Database, p: Projection, checkpoint: Database.Statement<[string], unknown>) {
    const retired: string[] = [];
    for (const old of p.supersedes ?? []) {
      if (checkpoint.get(old.name) === undefined) continue;
      this.logger.log(`Projection ${old.name}: superseded by ${p.name}, dropping its tables`);
      this.reset(db, old);
      retired.push(old.name);
    }
    return retired;
  }

  private reset(db: Database.Database, p: Pick<Projection, 'name' | 'tables'>): void {
    for (const table of p.tables) db.exec(`DROP TABLE IF EXISTS "${table.replace(/"/g, '""')}"`);
    db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(p.name);
  }
}

import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EventStore, Position } from '@filing/event-store';
import type { Projection } from './projection';
import { activeReadModelFile, removeDatabaseFiles } from './read-model-files';
import { compareReadModels, type ReadModelDifference, readModelPosition, rebuildReadModels } from './rebuild';

export interface AuditOptions {
  readonly dataDir: string;
  readonly store: EventStore;
  readonly projections: readonly Projection[];
}

export interface AuditReport {
  readonly tables: readonly string[];
  readonly rows: number;
  /** SHA-256 over the rebuilt read models, in key order. */
  readonly digest: string;
  /** Where the live models stood: the rebuild stopped there too. */
  readonly position: Position | null;
  readonly differences: readonly ReadModelDifference[];
}

/** The audit cannot run: no live read models, or models of another projection version. */
export class AuditNotPossibleError extends Error {
  override readonly name = 'AuditNotPossibleError';
}

/**
 * Rebuilds every read model into a scratch database up to the position the live models have
 * reached, and compares the two table by table inside one read snapshot of the live database,
 * so a running service may keep writing meanwhile.
 */
export async function auditReadModels({ dataDir, store, projections }: AuditOptions): Promise<AuditReport> {
  const liveFile = activeReadModelFile(dataDir);
  if (!existsSync(liveFile))
    throw new AuditNotPossibleError(`No live read models at ${liveFile}: has the service run?`);

  const live = new Database(liveFile, { readonly: true, fileMustExist: true });
  const scratch = join(dataDir, `audit-${process.pid}-${Date.now()}.db`);
  try {
    // A read transaction pins one snapshot: checkpoints and rows are compared as of one instant.
    live.exec('BEGIN');
    const versions = new Map(
      live
        .prepare<[], { name: string; version: number }>('SELECT name, version FROM projection_checkpoints')
        .all()
        .map((r) => [r.name, r.version]),
    );
    const outdated = projections.filter((p) => versions.has(p.name) && versions.get(p.name) !== p.version);
    if (outdated.length > 0) {
      throw new AuditNotPossibleError(
        `Live read models have other versions than this code (${outdated.map((p) => `${p.name} ${versions.get(p.name)} ≠ ${p.version}`).join(', ')}); start the service once so it rebuilds them.`,
      );
    }
    const position = readModelPosition(
      live,
      projections.map((p) => p.name),
    );
    await rebuildReadModels({ store, projections, file: scratch, stopAt: position });
    const rebuilt = new Database(scratch, { readonly: true });
    try {
      const tables = projections.flatMap((p) => p.tables);
      const { differences, digest, rows } = compareReadModels(live, rebuilt, tables);
      return { tables, rows, digest, position, differences };
    } finally {
      rebuilt.close();
    }
  } finally {
    if (live.inTransaction) live.exec('COMMIT');
    live.close();
    removeDatabaseFiles(scratch);
  }
}

/** Columns holding a credential's hash: an audit report names that they differ, not their values. */
const CREDENTIAL_HASH = /_hash$/;

/**
 * One difference as the operator reads it: the table and key, the columns that differ, and both
 * rows. Credential hashes show only their first characters, enough to tell rows apart.
 */
export function formatReadModelDifference(d: ReadModelDifference): string {
  const columns = d.live && d.rebuilt ? `\n  columns: ${differingColumns(d.live, d.rebuilt).join(', ')}` : '';
  return `DIFF ${d.table} ${maskKey(d)}${columns}\n  live:    ${JSON.stringify(maskRow(d.live))}\n  rebuilt: ${JSON.stringify(maskRow(d.rebuilt))}\n`;
}

function differingColumns(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((n) => JSON.stringify(a[n]) !== JSON.stringify(b[n])).sort();
}

export function maskCredentialHash(value: unknown): unknown {
  return typeof value === 'string' && value.length > 8 ? `${value.slice(0, 8)}…` : value;
}

function maskRow(row: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!row) return row;
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, CREDENTIAL_HASH.test(k) ? maskCredentialHash(v) : v]),
  );
}

/** A key made of a credential hash (the tokens table) is shown masked as well. */
function maskKey(d: ReadModelDifference): string {
  if (!d.keyColumns.some((c) => CREDENTIAL_HASH.test(c))) return d.key;
  const values = JSON.parse(d.key) as unknown[];
  return JSON.stringify(values.map((v, i) => (CREDENTIAL_HASH.test(d.keyColumns[i]) ? maskCredentialHash(v) : v)));
}

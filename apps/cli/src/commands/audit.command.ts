import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_STORE, type EventStore, positionToString } from '@filing/event-store';
import {
  activeReadModelFile,
  APP_CONFIG,
  type AppConfig,
  compareReadModels,
  ProjectionRunner,
  readModelPosition,
  rebuildReadModels,
  removeDatabaseFiles,
} from '@filing/platform';
import { type CliCommand, CommandFailedError, UsageError } from '../cli-command';

const SHOWN = 50;

/**
 * Rebuilds every read model into a scratch database up to the position the live models have
 * reached, and compares the two table by table inside one read snapshot of the live database
 * (so a running service may keep writing).
 */
export const auditCommand: CliCommand = {
  name: 'audit',
  usage: 'audit',
  summary: 'Rebuild read models into scratch and compare them with the live ones (non-zero exit on any difference)',
  async run(app, args, out) {
    if (args.length > 0) throw new UsageError(`audit takes no arguments, got ${args.join(' ')}`);
    const config = app.get<AppConfig>(APP_CONFIG);
    const store = app.get<EventStore>(EVENT_STORE);
    const projections = app.get(ProjectionRunner).registered;
    const liveFile = activeReadModelFile(config.dataDir);
    if (!existsSync(liveFile)) throw new CommandFailedError(`No live read models at ${liveFile}: has the service run?`);

    const live = new Database(liveFile, { readonly: true, fileMustExist: true });
    const scratch = join(config.dataDir, `audit-${process.pid}.db`);
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
        throw new CommandFailedError(
          `Live read models have other versions than this code (${outdated.map((p) => `${p.name} ${versions.get(p.name)} ≠ ${p.version}`).join(', ')}); start the service once so it rebuilds them.`,
        );
      }
      const position = readModelPosition(live, projections.map((p) => p.name));
      await rebuildReadModels({ store, projections, file: scratch, stopAt: position });
      const rebuilt = new Database(scratch, { readonly: true });
      const tables = projections.flatMap((p) => p.tables);
      const { differences, digest, rows } = compareReadModels(live, rebuilt, tables);
      rebuilt.close();

      out.write(`audited ${tables.length} tables, ${rows} rows, at position ${position ? positionToString(position) : 'start'}\n`);
      out.write(`read-model digest sha256:${digest}\n`);
      for (const d of differences.slice(0, SHOWN)) {
        out.write(`DIFF ${d.table} ${d.key}\n  live:    ${JSON.stringify(d.live)}\n  rebuilt: ${JSON.stringify(d.rebuilt)}\n`);
      }
      if (differences.length > SHOWN) out.write(`… and ${differences.length - SHOWN} more differences\n`);
      if (differences.length > 0) {
        throw new CommandFailedError(`audit failed: ${differences.length} rows differ from a rebuild`);
      }
      out.write('audit passed: the live read models equal a rebuild from the stream\n');
    } finally {
      if (live.inTransaction) live.exec('COMMIT');
      live.close();
      removeDatabaseFiles(scratch);
    }
  },
};

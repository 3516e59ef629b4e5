import { EVENT_STORE, type EventStore, positionToString } from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  AuditNotPossibleError,
  auditReadModels,
  formatReadModelDifference,
  ProjectionRunner,
} from '@filing/platform';
import { type CliCommand, CommandFailedError, UsageError } from '../cli-command';

const SHOWN = 50;

export const auditCommand: CliCommand = {
  name: 'audit',
  usage: 'audit',
  summary: 'Rebuild read models into scratch and compare them with the live ones (non-zero exit on any difference)',
  async run(app, args, out) {
    if (args.length > 0) throw new UsageError(`audit takes no arguments, got ${args.join(' ')}`);
    const report = await auditReadModels({
      dataDir: app.get<AppConfig>(APP_CONFIG).dataDir,
      store: app.get<EventStore>(EVENT_STORE),
      projections: app.get(ProjectionRunner).registered,
    }).catch((err: unknown) => {
      throw err instanceof AuditNotPossibleError ? new CommandFailedError(err.message) : err;
    });
    const { tables, rows, position, digest, differences } = report;
    out.write(
      `audited ${tables.length} tables, ${rows} rows, at position ${position ? positionToString(position) : 'start'}\n`,
    );
    out.write(`read-model digest sha256:${digest}\n`);
    for (const d of differences.slice(0, SHOWN)) out.write(formatReadModelDifference(d));
    if (differences.length > SHOWN) out.write(`… and ${differences.length - SHOWN} more differences\n`);
    if (differences.length > 0)
      throw new CommandFailedError(`audit failed: ${differences.length} rows differ from a rebuild`);
    out.write('audit passed: the live read models equal a rebuild from the stream\n');
  },
};

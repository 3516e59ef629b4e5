import { SingleBar } from 'cli-progress';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  APP_CONFIG,
  type AppConfig,
  newReadModelFile,
  ProjectionRunner,
  publishReadModelFile,
  rebuildReadModels,
  type RebuildProgress,
} from '@filing/platform';
import { type CliCommand, UsageError } from '../cli-command';

/**
 * Rebuilds every read model from the stream into a new database, then publishes it: a running
 * service keeps answering from the old models and swaps to the new ones within a second.
 */
export const replayCommand: CliCommand = {
  name: 'replay',
  usage: 'replay',
  summary: 'Rebuild every read model from the event stream, then swap it in',
  async run(app, args, out) {
    if (args.length > 0) throw new UsageError(`replay takes no arguments, got ${args.join(' ')}`);
    const config = app.get<AppConfig>(APP_CONFIG);
    const store = app.get<EventStore>(EVENT_STORE);
    const projections = app.get(ProjectionRunner).registered;
    const file = newReadModelFile(config.dataDir);
    const reporter = progressReporter(out);
    const result = await rebuildReadModels({ store, projections, file, onProgress: reporter.update });
    reporter.done();
    publishReadModelFile(config.dataDir, file);
    const seconds = result.elapsedMs / 1000;
    out.write(
      `Rebuilt ${projections.length} read models from ${result.events} events in ${seconds.toFixed(1)} s ` +
        `(${Math.round(result.events / Math.max(seconds, 0.001))} events/s) into ${file}.\n` +
        'A running service switches to it within a second; otherwise the next start uses it.\n',
    );
  },
};

/** A progress bar on a terminal; plain progress lines (every few seconds) otherwise. */
function progressReporter(out: NodeJS.WritableStream) {
  const tty = (out as NodeJS.WriteStream).isTTY === true;
  const bar = tty
    ? new SingleBar({
        format: 'replay [{bar}] {percentage}% | {events} events | {rate} events/s | ETA {eta_formatted}',
        stream: out,
        hideCursor: true,
      })
    : null;
  let lastLine = 0;
  bar?.start(1000, 0, { events: 0, rate: 0 });
  return {
    // An arrow, not a method: it is handed over as the `onProgress` callback.
    update: (p: RebuildProgress) => {
      const rate = Math.round(p.events / Math.max(p.elapsedMs / 1000, 0.001));
      const fraction =
        p.target && p.position && p.target.commit > 0n
          ? Number((p.position.commit * 1000n) / p.target.commit) / 1000
          : 0;
      if (bar) {
        bar.update(Math.round(fraction * 1000), { events: p.events, rate });
      } else if (Date.now() - lastLine >= 2000) {
        lastLine = Date.now();
        const eta = fraction > 0 ? Math.round(((1 - fraction) * p.elapsedMs) / fraction / 1000) : '?';
        out.write(`replay: ${p.events} events, ${rate} events/s, ${Math.round(fraction * 100)}%, ETA ${eta} s\n`);
      }
    },
    done() {
      if (bar) {
        bar.update(1000);
        bar.stop();
      }
    },
  };
}

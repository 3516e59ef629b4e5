import { parseArgs } from 'node:util';
import { EVENT_STORE, type EventStore, parsePosition, positionToString, type RecordedEvent } from '@filing/event-store';
import { DATA_KEY_SEALED } from '@filing/platform';
import { type CliCommand, UsageError } from '../cli-command';

const PAGE = 1000;

/** NDJSON of event envelopes on stdout: the whole log, one stream, or everything after a position. */
export const eventsExportCommand: CliCommand = {
  name: 'events:export',
  usage: 'events:export [--stream STREAM] [--since POSITION]',
  summary: 'Print events as NDJSON (one envelope per line), oldest first',
  async run(app, args, out) {
    const { values } = parseArgs({
      args,
      options: { stream: { type: 'string' }, since: { type: 'string' } },
      strict: true,
    });
    if (values.stream && values.since) throw new UsageError('--stream and --since cannot be combined');
    let since;
    try {
      since = values.since ? parsePosition(values.since) : undefined;
    } catch {
      throw new UsageError(`--since must be a position as printed by this command (e.g. 42/42), got ${values.since}`);
    }
    const store = app.get<EventStore>(EVENT_STORE);
    const live = liveKeys(store);
    const write = async (e: RecordedEvent) => {
      if (!(await live.shows(e))) return;
      await new Promise<void>((resolve) => {
        if (out.write(JSON.stringify(toEnvelope(e)) + '\n')) resolve();
        else out.once('drain', resolve);
      });
    };

    if (values.stream) {
      let from = 0n;
      for (;;) {
        const page = await store.readStream(values.stream, { fromRevision: from, maxCount: PAGE });
        for (const e of page) await write(e);
        if (page.length < PAGE) return;
        from = page[page.length - 1].revision + 1n;
      }
    }
    let after = since;
    for (;;) {
      // readAll is inclusive of its start: skip the event we resumed from.
      const page = (await store.readAll({ from: after ?? 'start', maxCount: PAGE + 1 })).filter(
        (e) => !after || positionToString(e.position) !== positionToString(after),
      );
      for (const e of page.slice(0, PAGE)) await write(e);
      if (page.length < PAGE) return;
      after = page[PAGE - 1].position;
    }
  },
};

/**
 * A sealed data key is exported only while its key stream still shows it: EventStoreDB's `$all`
 * carries a destroyed (tombstoned) or superseded (truncated) key until its next scavenge, and an
 * export must not bring back what a delete or a re-seal removed (the sqlite store has no such
 * rows left). Key streams are small: each is read once per export.
 */
function liveKeys(store: EventStore): { shows(e: RecordedEvent): Promise<boolean> } {
  const shown = new Map<string, Set<string>>();
  return {
    async shows(e) {
      if (e.type !== DATA_KEY_SEALED) return true;
      let ids = shown.get(e.streamId);
      if (!ids) {
        ids = new Set((await store.readStream(e.streamId)).map((k) => k.id));
        shown.set(e.streamId, ids);
      }
      return ids.has(e.id);
    },
  };
}

function toEnvelope(e: RecordedEvent) {
  return {
    position: positionToString(e.position),
    stream: e.streamId,
    revision: Number(e.revision),
    id: e.id,
    type: e.type,
    created: e.created.toISOString(),
    metadata: e.metadata,
    data: e.data,
  };
}

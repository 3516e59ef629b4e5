// Nest's decorators on the projection classes record metadata with it.
import 'reflect-metadata';
import { parentPort, workerData } from 'node:worker_threads';
import { parsePosition, SqliteEventStore } from '@filing/event-store';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import type { RebuildThreadMessage, RebuildThreadTask } from './rebuild-thread';

/** A rebuild thread (rebuild-thread.ts): its own read connection, its projections, its own file. */
async function main(task: RebuildThreadTask): Promise<number> {
  const projections = task.projections.map((m) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const made = require(m.file) as Record<string, new () => Projection>;
    return new made[m.exportName]();
  });
  const store = new SqliteEventStore({ file: task.eventsFile });
  const quiet = { log: () => {}, error: () => {}, warn: () => {} };
  const runner = new ProjectionRunner({
    store,
    file: task.file,
    projections,
    logger: quiet,
    isolateFailures: false,
    bulk: true,
  });
  try {
    await runner.replay({
      until: task.until === null ? null : parsePosition(task.until),
      pageSize: task.pageSize,
      onPage: () => post({ kind: 'progress', events: runner.eventsProcessed }),
    });
    runner.createDeferredIndexes();
    return runner.eventsProcessed;
  } finally {
    await runner.close();
    await store.close();
  }
}

function post(message: RebuildThreadMessage): void {
  parentPort?.postMessage(message);
}

main(workerData as RebuildThreadTask).then(
  (events) => post({ kind: 'done', events }),
  (err: unknown) =>
    post({
      kind: 'failed',
      message: err instanceof Error ? err.message : String(err),
      stack:
        err instanceof Error
          ? err.cause instanceof Error
            ? `${err.stack}\nCaused by: ${err.cause.stack}`
            : err.stack
          : undefined,
    }),
);

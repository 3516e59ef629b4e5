import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Projection, ProjectionModule } from './projection';

/** What a rebuild thread is given (structured-cloned): where to read, what to build, where. */
export interface RebuildThreadTask {
  readonly eventsFile: string;
  readonly file: string;
  readonly projections: readonly ProjectionModule[];
  /** `positionToString` of the last position to apply; null: an empty log. */
  readonly until: string | null;
  readonly pageSize: number;
}

/** What it answers: progress (events applied so far), then its end. */
export type RebuildThreadMessage =
  | { readonly kind: 'progress'; readonly events: number }
  | { readonly kind: 'done'; readonly events: number }
  | { readonly kind: 'failed'; readonly message: string; readonly stack?: string };

/** The projections a thread can make itself: each names its module and export. */
export function threadable(projections: readonly Projection[]): Projection[] {
  return projections.filter((p) => p.module !== undefined);
}

/**
 * Rebuilds `task.projections` on a worker thread into `task.file`; resolves with the events it
 * applied. Built, the thread's entry is `rebuild.worker.js` next to this file; from the
 * TypeScript sources (jest's swc transform, the bench's @swc-node/register) the thread does not
 * inherit the parent's hook: it registers @swc-node/register itself, then loads the `.ts` entry.
 */
export function rebuildOnThread(task: RebuildThreadTask, onProgress: (events: number) => void): Promise<number> {
  const ext = extname(__filename);
  const entry = join(__dirname, `rebuild.worker${ext}`);
  const options = { workerData: task };
  const worker =
    ext === '.ts'
      ? new Worker(
          `require(${JSON.stringify(require.resolve('@swc-node/register'))}); require(${JSON.stringify(entry)});`,
          { ...options, eval: true },
        )
      : new Worker(entry, options);
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    worker.on('message', (message: RebuildThreadMessage) => {
      if (message.kind === 'progress') return onProgress(message.events);
      settled = true;
      if (message.kind === 'done') resolve(message.events);
      else reject(Object.assign(new Error(message.message), { stack: message.stack ?? message.message }));
    });
    worker.on('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.on('exit', (code) => {
      if (!settled) reject(new Error(`The rebuild thread stopped (exit code ${code}) before it finished`));
    });
  });
}

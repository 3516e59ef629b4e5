import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../libs/event-store/src/sqlite/sqlite-event-store';

/**
 * An acknowledged append must survive kill -9: a child appends under load, we SIGKILL it, then
 * every append it acknowledged is read back whole, and no append is half there.
 */
describe('sqlite event store under SIGKILL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kill9-'));
  const file = join(dir, 'events.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged append, each one whole', async () => {
    const child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', join(__dirname, 'append-under-load.child.ts'), file],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const acks: Array<{ stream: string; id: string; count: number }> = [];
    let buffered = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const enough = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const [, stream, id, count] = line.split(' ');
          acks.push({ stream, id, count: Number(count) });
        }
        if (acks.length >= 3000) resolve();
      });
    });
    await Promise.race([enough, exited.then(() => Promise.reject(new Error('child exited early')))]);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const store = new SqliteEventStore({ file });
    try {
      const streams = new Map<string, Awaited<ReturnType<typeof store.readStream>>>();
      for (const ack of acks) {
        if (!streams.has(ack.stream)) streams.set(ack.stream, await store.readStream(ack.stream));
        const events = streams.get(ack.stream)!;
        const at = events.findIndex((e) => e.id === ack.id);
        expect(at).toBeGreaterThanOrEqual(0);
        expect(events.slice(at, at + ack.count).map((e) => e.data.k)).toEqual(
          Array.from({ length: ack.count }, (_, k) => k),
        );
      }
      // Appends in flight at the kill are either whole or absent: no stream ends inside a batch.
      const all = await store.readAll();
      for (const e of all) {
        const { k, of } = e.data as { k: number; of: number };
        if (k === 0) {
          const run = all.filter(
            (x) => x.streamId === e.streamId && x.data.i === e.data.i && x.data.caller === e.data.caller,
          );
          expect(run).toHaveLength(of);
        }
      }
      expect(all.length).toBeGreaterThanOrEqual(acks.reduce((n, a) => n + a.count, 0));
    } finally {
      await store.close();
    }
  }, 60_000);
});

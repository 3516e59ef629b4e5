/** The test server's scavenge: what a tombstone or `$tb` hides leaves its data file for good. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogStore, metastreamOf, type ProposedEvent } from './log-store';

const proposed = (text: string, type = 't.Event'): ProposedEvent => ({
  id: randomUUID(),
  type,
  contentType: 'application/json',
  data: Buffer.from(JSON.stringify({ text })),
  customMetadata: Buffer.alloc(0),
});
const any = { kind: 'any' } as const;

describe('scavenging the test server log', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'esdb-scavenge-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const fileText = () => readFileSync(join(dir, 'log.ndjson'), 'utf8');
  const base64 = (text: string) => Buffer.from(JSON.stringify({ text })).toString('base64');

  it('removes a tombstoned stream and truncated revisions from the file, and keeps everything else readable', () => {
    const store = new LogStore(dir);
    store.append('kept-1', any, [proposed('KEPT-ONE')]);
    store.append('key-1', any, [proposed('KEY-ONE-SECRET')]);
    store.append('key-2', any, [proposed('KEY-TWO-OLD'), proposed('KEY-TWO-NEW')]);
    store.append(metastreamOf('key-2'), any, [
      { ...proposed('meta'), type: '$metadata', data: Buffer.from('{"$tb":1}') },
    ]);
    store.tombstone('key-1', any);
    const before = store.endPosition;
    expect(fileText()).toContain(base64('KEY-ONE-SECRET'));

    expect(store.scavenge()).toBe(2);
    store.close();
    for (const gone of ['KEY-ONE-SECRET', 'KEY-TWO-OLD']) expect(fileText()).not.toContain(base64(gone));

    const reopened = new LogStore(dir);
    try {
      expect(reopened.streamView('key-1').kind).toBe('deleted');
      const view = reopened.streamView('key-2');
      expect(view.kind === 'ok' && view.events.filter((e) => view.visible(e)).map((e) => e.data.toString())).toEqual([
        JSON.stringify({ text: 'KEY-TWO-NEW' }),
      ]);
      expect(reopened.lastEventNumber('key-2')).toBe(1n);
      expect(reopened.log.map((e) => e.streamId)).toEqual(['kept-1', 'key-2', metastreamOf('key-2'), 'key-1']);
      // Positions are never handed out twice, even after the newest records went.
      const next = reopened.append('kept-1', any, [proposed('AFTER')]);
      expect(next.kind === 'ok' && next.position! >= before).toBe(true);
      expect(reopened.streamView('kept-1').kind).toBe('ok');
    } finally {
      reopened.close();
    }
  });
});

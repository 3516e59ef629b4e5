import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDedupeStore } from '../dedupe-sqlite';
import { FakeClock } from '../testing/fake-fetch';
import { type DedupeStore, Deduplicator, MemoryDedupeStore } from './dedupe';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'dedupe-'));
  dirs.push(dir);
  return join(dir, 'dedupe.db');
};

const stores: [string, () => DedupeStore][] = [
  ['MemoryDedupeStore', () => new MemoryDedupeStore()],
  ['SqliteDedupeStore (file)', () => new SqliteDedupeStore({ database: tempFile(), pruneEvery: 3 })],
  ['SqliteDedupeStore (:memory:)', () => new SqliteDedupeStore({ database: ':memory:' })],
];

describe.each(stores)('%s', (_name, make) => {
  let store: DedupeStore;
  beforeEach(() => (store = make()));
  afterEach(() => store.close?.());

  it('claims an id once; a second claim is in_progress, then duplicate once completed', async () => {
    expect(await store.claim('a', 1000, 2000)).toBe('claimed');
    expect(await store.claim('a', 1001, 2001)).toBe('in_progress');
    expect(await store.claim('b', 1001, 2001)).toBe('claimed');
    await store.complete('a', 10_000);
    expect(await store.claim('a', 1002, 2002)).toBe('duplicate');
    expect(await store.claim('a', 9_999, 19_999)).toBe('duplicate');
  });

  it('forgets an id after its TTL, and a claim whose lease lapsed (crashed handler)', async () => {
    await store.claim('a', 1000, 2000);
    await store.complete('a', 5000);
    expect(await store.claim('a', 5000, 6000)).toBe('claimed');
    expect(await store.claim('a', 5500, 6500)).toBe('in_progress');
    expect(await store.claim('a', 6000, 7000)).toBe('claimed');
  });

  it('release lets the retry claim again, but never forgets a completed id', async () => {
    await store.claim('a', 1000, 2000);
    await store.release('a');
    expect(await store.claim('a', 1001, 2001)).toBe('claimed');
    await store.complete('a', 10_000);
    await store.release('a');
    expect(await store.claim('a', 1002, 2002)).toBe('duplicate');
  });

  it('keeps many ids apart', async () => {
    for (let i = 0; i < 50; i++) expect(await store.claim(`id-${i}`, 1000 + i, 100_000)).toBe('claimed');
    for (let i = 0; i < 50; i++) await store.complete(`id-${i}`, 100_000);
    for (let i = 0; i < 50; i++) expect(await store.claim(`id-${i}`, 2000, 100_000)).toBe('duplicate');
  });
});

describe('MemoryDedupeStore bounds', () => {
  it('drops expired entries and keeps at most maxEntries', () => {
    const store = new MemoryDedupeStore({ maxEntries: 3 });
    for (const id of ['a', 'b', 'c', 'd']) {
      store.claim(id, 0, 100);
      store.complete(id, 100);
    }
    expect(store.size).toBe(3);
    expect(store.claim('a', 1, 100)).toBe('claimed');
    store.claim('z', 500, 600);
    expect(store.size).toBe(1);
  });
});

describe('SqliteDedupeStore persistence', () => {
  it('remembers processed ids across a reopen and between two stores on one file', () => {
    const file = tempFile();
    const first = new SqliteDedupeStore({ database: file });
    const second = new SqliteDedupeStore({ database: file });
    expect(first.claim('a', 1000, 2000)).toBe('claimed');
    expect(second.claim('a', 1000, 2000)).toBe('in_progress');
    first.complete('a', 50_000);
    first.close();
    second.close();
    const reopened = new SqliteDedupeStore({ database: file });
    expect(reopened.claim('a', 3000, 4000)).toBe('duplicate');
    expect(reopened.prune(60_000)).toBe(1);
    expect(reopened.claim('a', 60_000, 61_000)).toBe('claimed');
    reopened.close();
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new SqliteDedupeStore({ database: ':memory:', table: 'x; DROP TABLE y' })).toThrow(TypeError);
  });
});

describe('Deduplicator', () => {
  it('runs the work once per id, releases on failure so a retry runs it again', async () => {
    const clock = new FakeClock();
    const dedupe = new Deduplicator({ store: new MemoryDedupeStore(), clock });
    const runs: string[] = [];
    await expect(dedupe.run('a', () => runs.push('a'))).resolves.toEqual({ status: 'processed', result: 1 });
    await expect(dedupe.run('a', () => runs.push('again'))).resolves.toEqual({ status: 'duplicate' });
    await expect(dedupe.run('b', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    await expect(dedupe.run('b', () => runs.push('b'))).resolves.toMatchObject({ status: 'processed' });
    expect(runs).toEqual(['a', 'b']);

    clock.advance(3 * 24 * 3600); // the default TTL
    await expect(dedupe.run('a', () => runs.push('a-after-ttl'))).resolves.toMatchObject({ status: 'processed' });
  });

  it('a concurrent second delivery of the same id is in_progress while the first runs', async () => {
    const dedupe = new Deduplicator({ store: new MemoryDedupeStore() });
    let finish!: () => void;
    const first = dedupe.run('a', () => new Promise<void>((r) => (finish = r)));
    await new Promise((r) => setImmediate(r));
    await expect(dedupe.run('a', () => undefined)).resolves.toEqual({ status: 'in_progress' });
    finish();
    await expect(first).resolves.toMatchObject({ status: 'processed' });
    await expect(dedupe.run('a', () => undefined)).resolves.toEqual({ status: 'duplicate' });
  });
});

/**
 * What the conformance suite cannot say about the esdb adapter alone: system events in `$all`,
 * checkpoints, a server that stays down for a while, and the subscription's life cycle.
 */
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { EventStoreUnavailableError } from '../../libs/event-store/src/errors';
import { comparePositions } from '../../libs/event-store/src/position';
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { collect, ev } from '../../libs/event-store/src/testing/conformance';
import { startEsdbTestServer, type EsdbTestServer } from '../esdb-test-server/harness';
import { retry } from '../../libs/event-store/src/testing/retry';

let server: EsdbTestServer;
let store: EsdbEventStore;
/** The raw client, to write what the adapter refuses to (system events). */
let raw: EventStoreDBClient;

beforeAll(async () => {
  server = await startEsdbTestServer();
  store = open();
  raw = EventStoreDBClient.connectionString(server.connectionString);
});

afterAll(async () => {
  await store?.close();
  await raw?.dispose();
  await server?.stop();
});

function open(): EsdbEventStore {
  return new EsdbEventStore({ connectionString: server.connectionString, resubscribeDelayMs: { min: 50, max: 500 } });
}

const stream = () => `adapter-${randomUUID()}`;
const typePrefix = () => `a${randomUUID().replace(/-/g, '').slice(0, 10)}.`;

/** Many `$`-typed events in a `$`-stream: more than one page of `$all` (512). */
async function appendSystemEvents(count: number): Promise<void> {
  await raw.appendToStream(
    `$adapter-sys-${randomUUID()}`,
    Array.from({ length: count }, () => jsonEvent({ type: '$system', data: {} })),
  );
}

describe('system events in $all', () => {
  it('readAll skips them (over more than one page) and still returns maxCount events', async () => {
    const p = typePrefix();
    const s = stream();
    await store.appendToStream(s, [ev(`${p}A`), ev(`${p}B`)]);
    await appendSystemEvents(600);
    await raw.setStreamMetadata(s, { maxAge: 3600 });
    const c = await store.appendToStream(s, [ev(`${p}C`)]);

    const backwards = await store.readAll({ direction: 'backwards', maxCount: 3 });
    expect(backwards.map((e) => e.type)).toEqual([`${p}C`, `${p}B`, `${p}A`]);

    const fromC = await store.readAll({ direction: 'backwards', from: c.position, maxCount: 2 });
    expect(fromC.map((e) => e.type)).toEqual([`${p}B`, `${p}A`]);

    const forwards = await store.readAll({ from: backwards[2].position, maxCount: 3 });
    expect(forwards.map((e) => e.type)).toEqual([`${p}A`, `${p}B`, `${p}C`]);
  });

  it('headPosition is the newest application event, not a newer system event', async () => {
    const r = await store.appendToStream(stream(), [ev('t.Head')]);
    await appendSystemEvents(600);
    expect(await store.headPosition()).toEqual(r.position);
  });

  it('a subscription without a filter does not deliver them', async () => {
    const p = typePrefix();
    const start = await store.appendToStream(stream(), [ev('t.Start')]);
    await appendSystemEvents(3);
    await store.appendToStream(stream(), [ev(`${p}App`)]);
    const sub = store.subscribeToAll({ from: start.position });
    const reader = collect(sub);
    await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
    await sub.stop();
    const types = reader.events().map((e) => e.type);
    expect(types).toContain(`${p}App`);
    expect(types.filter((t) => t.startsWith('$'))).toEqual([]);
  });
});

describe('checkpoints', () => {
  it('reports how far a filtered subscription has looked, and resumes after it when the connection drops', async () => {
    const p = typePrefix();
    const s = stream();
    const start = await store.appendToStream(s, [ev('t.Start')]);
    // 70 events that the filter skips, and no event. A 24.10 server catches up in pages of 32
    // from `start` itself: the first page's checkpoint is `start` (not news to the adapter); the
    // second page delivered nothing and reports where it began (its first event's commit
    // position, prepare 0); reaching the end, the last page reports its start the same way.
    await store.appendToStream(
      s,
      Array.from({ length: 70 }, () => ev('t.Skipped')),
    );
    const sub = store.subscribeToAll({ from: start.position, filter: { eventTypePrefixes: [p] } });
    const reader = collect(sub);
    await reader.until((m) => m.some((x) => x.kind === 'checkpoint') && m.some((x) => x.kind === 'caught-up'));
    const skipped = await store.readAll({ from: start.position, maxCount: 71 });
    expect(reader.messages.filter((m) => m.kind === 'checkpoint')).toEqual([
      { kind: 'checkpoint', position: { commit: skipped[32].position.commit, prepare: 0n } },
      { kind: 'checkpoint', position: { commit: skipped[64].position.commit, prepare: 0n } },
    ]);

    await server.restart('SIGKILL');
    await retry(() => store.appendToStream(s, [ev(`${p}After`)]));
    const got = await reader.untilEvents(1, 20_000);
    await sub.stop();
    expect(got.map((e) => e.type)).toEqual([`${p}After`]);
  }, 40_000);
});

describe('a server that stays down', () => {
  it('reports unavailability, then the subscription carries on without loss or repeat', async () => {
    const p = typePrefix();
    const s = stream();
    await store.appendToStream(s, [ev(`${p}1`)]);
    const sub = store.subscribeToAll({ from: 'start', filter: { eventTypePrefixes: [p] } });
    const reader = collect(sub);
    await reader.untilEvents(1);

    await server.kill('SIGKILL');
    await expect(store.ping()).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await expect(store.appendToStream(s, [ev(`${p}Lost`)])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await expect(store.readStream(s)).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await server.start();

    await retry(() => store.appendToStream(s, [ev(`${p}2`)]));
    await store.appendToStream(s, [ev(`${p}3`)]);
    const got = await reader.untilEvents(3, 20_000);
    await sub.stop();
    expect(got.map((e) => e.type)).toEqual([`${p}1`, `${p}2`, `${p}3`]);
    await expect(store.ping()).resolves.toBeUndefined();
  }, 40_000);

  it('a subscription from end resumes from where it started, not from the new end', async () => {
    const p = typePrefix();
    const sub = store.subscribeToAll({ from: 'end', filter: { eventTypePrefixes: [p] } });
    const reader = collect(sub);
    await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
    await server.restart();
    // Appended through another connection while this one is still reconnecting.
    const other = open();
    try {
      await retry(() => other.appendToStream(stream(), [ev(`${p}WhileDown`)]));
    } finally {
      await other.close();
    }
    const got = await reader.untilEvents(1, 20_000);
    await sub.stop();
    expect(got.map((e) => e.type)).toEqual([`${p}WhileDown`]);
    expect(reader.messages.filter((m) => m.kind === 'caught-up')).toHaveLength(1);
  }, 40_000);
});

describe('subscription life cycle', () => {
  it('delivers a large catch-up in order to a slow consumer', async () => {
    const p = typePrefix();
    const s = stream();
    const payload = 'x'.repeat(2_000);
    for (let i = 0; i < 4; i++) {
      await store.appendToStream(
        s,
        Array.from({ length: 250 }, (_, j) => ev(`${p}E`, { i: i * 250 + j, payload })),
      );
    }
    const sub = store.subscribeToAll({ from: 'start', filter: { eventTypePrefixes: [p] } });
    const seen: number[] = [];
    for await (const m of sub) {
      if (m.kind !== 'event') continue;
      seen.push(m.event.data.i as number);
      if (seen.length % 100 === 0) await new Promise((r) => setTimeout(r, 5));
      if (seen.length === 1_000) break;
    }
    await sub.stop();
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
  });

  it('stop() ends an iteration that is waiting for the next event', async () => {
    const sub = store.subscribeToAll({ from: 'end' });
    const iterator = sub[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { kind: 'caught-up' } });
    const pending = iterator.next();
    await sub.stop();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('closing the store ends its subscriptions with EventStoreUnavailableError and refuses new calls', async () => {
    const own = open();
    const sub = own.subscribeToAll({ from: 'end' });
    const iterator = sub[Symbol.asyncIterator]();
    await iterator.next(); // caught-up
    const pending = iterator.next();
    await own.close();
    await expect(pending).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await expect(own.readStream(stream())).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await expect(own.appendToStream(stream(), [ev('t.A')])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(() => own.subscribeToAll()).toThrow(EventStoreUnavailableError);
  });

  it('positions of delivered events are strictly increasing across resubscriptions', async () => {
    const p = typePrefix();
    const s = stream();
    const sub = store.subscribeToAll({ from: 'end', filter: { streamNamePrefixes: [s] } });
    const reader = collect(sub);
    await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
    for (let i = 0; i < 3; i++) {
      await retry(() => store.appendToStream(s, [ev(`${p}${i}a`), ev(`${p}${i}b`)]));
      await reader.untilEvents(2 * (i + 1), 20_000);
      await server.restart(i % 2 === 0 ? 'SIGTERM' : 'SIGKILL');
    }
    const got = reader.events();
    await sub.stop();
    expect(got.map((e) => e.type)).toEqual([`${p}0a`, `${p}0b`, `${p}1a`, `${p}1b`, `${p}2a`, `${p}2b`]);
    for (let i = 1; i < got.length; i++) expect(comparePositions(got[i - 1].position, got[i].position)).toBeLessThan(0);
  }, 60_000);
});

describe('server quirks the adapter works around', () => {
  it('a 24.10.0–.4 server checkpointing an empty filtered catch-up at End (KDB-710) loses no later event', async () => {
    const old = await startEsdbTestServer({ version: '24.10.4' });
    const adapter = new EsdbEventStore({
      connectionString: old.connectionString,
      resubscribeDelayMs: { min: 50, max: 500 },
    });
    try {
      const prefix = typePrefix();
      const sub = adapter.subscribeToAll({ from: 'start', filter: { eventTypePrefixes: [prefix] } });
      const reader = collect(sub);
      await reader.until((m) => m.some((x) => x.kind === 'caught-up'));
      await adapter.appendToStream(stream(), [ev(`${prefix}Live`)]);
      const got = await reader.untilEvents(1);
      await sub.stop();
      expect(got.map((e) => e.type)).toEqual([`${prefix}Live`]);
      // It never hands the End marker out as a checkpoint either.
      expect(
        reader.messages.filter((m) => m.kind === 'checkpoint' && m.position.commit === 0xffffffffffffffffn),
      ).toEqual([]);
    } finally {
      await adapter.close();
      await old.stop();
    }
  });

  it('refuses the nil UUID as an event id before sending anything (the server would answer BadRequest)', async () => {
    await expect(
      store.appendToStream(stream(), [{ id: '00000000-0000-0000-0000-000000000000', type: 't.Nil', data: {} }]),
    ).rejects.toThrow(/events\[0\]\.id must be a UUID other than the nil UUID/);
  });
});

/**
 * Subscriptions on the EventStoreDB test server, driven by the raw @eventstore/db-client: the
 * catch-up/live seam, filters, checkpoints at the server's cadence, backpressure and slow
 * consumers, dropped connections.
 */
import {
  BACKWARDS,
  END,
  START,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
  type Filter,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { event, prefix, readAll, record, serverAndClient, sleep, stream, withOwnServer } from './raw-client';

const env = serverAndClient();

async function subscribeFiltered(from: Position, filter: Filter, expected: number) {
  const sub = env.client.subscribeToAll({ fromPosition: from, filter });
  const rec = record(sub);
  try {
    await rec.until(() => rec.events.length >= expected && rec.log.includes('caught-up'));
    return rec;
  } finally {
    await sub.unsubscribe();
  }
}

describe('$all', () => {
  it('confirmation, catch-up after a position (exclusive), caught_up, then live', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(s, [event(`${p}Before`)]);
    await env.client.appendToStream(s, [event(`${p}1`), event(`${p}2`)]);
    const sub = env.client.subscribeToAll({
      fromPosition: start.position!,
      filter: eventTypeFilter({ prefixes: [p] }),
    });
    let confirmed = false;
    sub.on('confirmation', () => (confirmed = true));
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.appendToStream(stream(), [event(`${p}3`)]);
    await rec.until(() => rec.events.length >= 3);
    await sub.unsubscribe();
    expect(confirmed).toBe(true);
    expect(rec.log).toEqual([`${p}1`, `${p}2`, 'caught-up', `${p}3`]);
  });

  it('from end delivers only new events; excludeSystemEvents hides $-types', async () => {
    const p = prefix();
    const s = stream();
    await env.client.appendToStream(s, [event(`${p}Old`)]);
    const sub = env.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.setStreamMetadata(s, { maxCount: 10 }); // a `$metadata` event in `$$<stream>`
    await env.client.appendToStream(s, [event(`${p}New`)]);
    await rec.until(() => rec.events.length >= 1);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['caught-up', `${p}New`]);
  });

  it.each([
    ['event-type prefixes', (p: string, _s: string) => eventTypeFilter({ prefixes: [`${p}A`, `${p}C`] })],
    ['event-type regex', (p: string, _s: string) => eventTypeFilter({ regex: `^${p.replace('.', '\\.')}(A|C)$` })],
    ['stream-name prefixes', (_p: string, s: string) => streamNameFilter({ prefixes: [`${s}-a`, `${s}-c`] })],
    ['stream-name regex', (_p: string, s: string) => streamNameFilter({ regex: `^${s}-[ac]$` })],
  ])('filters by %s', async (_, makeFilter) => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(stream(), [event('Start')]);
    await env.client.appendToStream(`${s}-a`, [event(`${p}A`)]);
    await env.client.appendToStream(`${s}-b`, [event(`${p}B`)]);
    await env.client.appendToStream(`${s}-c`, [event(`${p}C`)]);
    const rec = await subscribeFiltered(start.position!, makeFilter(p, s), 2);
    expect(rec.events.map((e) => e.type)).toEqual([`${p}A`, `${p}C`]);
  });

  it('delivers events that stream metadata hides from stream reads', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(stream(), [event('Start')]);
    await env.client.appendToStream(s, [event(`${p}A`), event(`${p}B`)]);
    await env.client.setStreamMetadata(s, { truncateBefore: 2 });
    const rec = await subscribeFiltered(start.position!, eventTypeFilter({ prefixes: [p] }), 2);
    expect(rec.events.map((e) => e.type)).toEqual([`${p}A`, `${p}B`]);
  });
});

describe('checkpoints (filtered $all)', () => {
  it('catch-up: per page of maxSearchWindow events, at the later of the last event sent and the page start; one more at the end', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(s, [event('Start')]);
    // From `start` (inclusive, the first page starts there): Start, Hit, 10 × Miss, Hit. Window 5,
    // interval 1: pages [Start, Hit, Miss×3], [Miss×5], [Miss×2, Hit, end].
    await env.client.appendToStream(s, [
      event(`${p}Hit`),
      ...Array.from({ length: 10 }, () => event('Miss')),
      event(`${p}Hit`),
    ]);
    const checkpoints: Position[] = [];
    const filter = eventTypeFilter({
      prefixes: [p],
      maxSearchWindow: 5,
      checkpointInterval: 1,
      checkpointReached: (_sub, position) => {
        checkpoints.push(position);
      },
    });
    const sub = env.client.subscribeToAll({ fromPosition: start.position!, filter });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    const after = await readAll(env.client, { fromPosition: start.position!, maxCount: 13 });
    expect(checkpoints).toEqual([
      after[1].position, // the first page's event
      { commit: after[5].position.commit, prepare: 0n }, // nothing sent: where the second page began
      after[12].position, // the end: the last event sent
    ]);

    // Live, the counter runs from the subscription's start: the fifth record appended since.
    checkpoints.length = 0;
    const third = await env.client.appendToStream(s, [event('Miss'), event('Miss'), event('Miss')]);
    await env.client.appendToStream(
      s,
      Array.from({ length: 5 }, () => event('Miss')),
    );
    await rec.until(() => checkpoints.length >= 1);
    await sub.unsubscribe();
    const [, , fifth] = await readAll(env.client, { fromPosition: third.position!, maxCount: 3 });
    expect(checkpoints).toEqual([fifth.position]);
  });

  it('the window defaults to the server read batch (32) and the interval multiplies it', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(s, [event('Start')]);
    await env.client.appendToStream(
      s,
      Array.from({ length: 70 }, () => event('Miss')),
    );
    const checkpoints: Position[] = [];
    const filter = eventTypeFilter({
      prefixes: [p],
      checkpointInterval: 2,
      checkpointReached: (_s, position) => void checkpoints.push(position),
    });
    const rec = await subscribeFiltered(start.position!, filter, 0);
    const after = await readAll(env.client, { fromPosition: start.position!, maxCount: 71 });
    // Pages of 32 from `start`: the second brings the count to 64 = 2 × 32; the last page (the
    // end) checkpoints at its start.
    expect(rec.events).toEqual([]);
    expect(checkpoints).toEqual([
      { commit: after[32].position.commit, prepare: 0n },
      { commit: after[64].position.commit, prepare: 0n },
    ]);
  });

  it.each([
    ['24.10.5', 'checkpoints at the log start (0,0), then live as usual', false],
    // KDB-710: a client that resumes from this checkpoint resumes from the end of the log.
    ['24.10.4', 'checkpoints at ulong.MaxValue (End), and no checkpoint after it', true],
  ] as const)('%s: from the start, if catch-up sends nothing, it %s', async (version, _, endCheckpoint) => {
    await withOwnServer({ version }, async (_s, c) => {
      const p = prefix();
      // A real node's log is never empty (epoch records and the like); one record that the
      // filter skips stands for them.
      await c.appendToStream(stream(), [event('Before')]);
      const checkpoints: Position[] = [];
      const sub = c.subscribeToAll({
        fromPosition: START,
        filter: eventTypeFilter({
          prefixes: [p],
          checkpointReached: (_sub, position) => void checkpoints.push(position),
        }),
      });
      const rec = record(sub);
      await rec.until(() => rec.log.includes('caught-up'));
      const misses = await c.appendToStream(
        stream(),
        Array.from({ length: 40 }, () => event('Miss')),
      );
      await c.appendToStream(stream(), [event(`${p}Hit`)]);
      await rec.until(() => rec.events.length >= 1);
      await sub.unsubscribe();
      // Live, the interval (32) is complete at the 32nd record since the subscription began.
      const [thirtySecond] = (
        await readAll(c, { direction: BACKWARDS, fromPosition: misses.position!, maxCount: 8 })
      ).slice(-1);
      const ulongMax = 2n ** 64n - 1n;
      expect(checkpoints).toEqual(
        endCheckpoint
          ? [{ commit: ulongMax, prepare: ulongMax }]
          : [{ commit: 0n, prepare: 0n }, thirtySecond.position],
      );
    });
  });
});

describe('stream subscriptions', () => {
  it('after a revision (exclusive), caught_up, then live', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('E0'), event('E1'), event('E2')]);
    const sub = env.client.subscribeToStream(s, { fromRevision: 0n });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.appendToStream(s, [event('E3')]);
    await rec.until(() => rec.events.length >= 3);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['E1', 'E2', 'caught-up', 'E3']);
    expect(rec.events.map((e) => e.revision)).toEqual([1n, 2n, 3n]);
  });

  it('a missing stream is caught up at once and waits for its first event', async () => {
    const missing = stream();
    const sub = env.client.subscribeToStream(missing, { fromRevision: START });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.appendToStream(missing, [event('First')]);
    await rec.until(() => rec.events.length >= 1);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['caught-up', 'First']);
  });

  it('a soft-deleted stream: catch-up finds nothing, live delivers what comes next', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('A'), event('B')]);
    await env.client.deleteStream(s);
    const sub = env.client.subscribeToStream(s, { fromRevision: START });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.appendToStream(s, [event('C')]);
    await rec.until(() => rec.events.length >= 1);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['caught-up', 'C']);
    expect(rec.events[0].revision).toBe(2n);
  });

  it('catch-up honours $tb and $maxCount; live events are forwarded whatever the metadata', async () => {
    const s = stream();
    await env.client.appendToStream(s, [event('E0'), event('E1'), event('E2'), event('E3')]);
    await env.client.setStreamMetadata(s, { truncateBefore: 2 });
    const sub = env.client.subscribeToStream(s, { fromRevision: START });
    const rec = record(sub);
    await rec.until(() => rec.log.includes('caught-up'));
    await env.client.setStreamMetadata(s, { maxCount: 1 });
    await env.client.appendToStream(s, [event('E4'), event('E5')]);
    await rec.until(() => rec.events.length >= 4);
    await sub.unsubscribe();
    expect(rec.log).toEqual(['E2', 'E3', 'caught-up', 'E4', 'E5']);
  });
});

describe('backpressure and slow consumers', () => {
  it('catches up over a large log while honouring backpressure', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(s, [event('Start')]);
    const payload = 'y'.repeat(4_000);
    for (let i = 0; i < 5; i++) {
      await env.client.appendToStream(
        s,
        Array.from({ length: 200 }, (_, j) => event(`${p}Big`, { i: i * 200 + j, payload })),
      );
    }
    const sub = env.client.subscribeToAll({
      fromPosition: start.position!,
      filter: eventTypeFilter({ prefixes: [p] }),
    });
    const seen: number[] = [];
    for await (const r of sub) {
      seen.push((r.event!.data as { i: number }).i);
      // A slow consumer: during catch-up the server waits for it (it never drops it).
      if (seen.length % 100 === 0) await sleep(5);
      if (seen.length === 1_000) break;
    }
    await sub.unsubscribe();
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
  });

  it('no gap and no repeat at the seam while appends land during a long catch-up', async () => {
    const p = prefix();
    const s = stream();
    const start = await env.client.appendToStream(s, [event('Start')]);
    for (let i = 0; i < 15; i++) {
      await env.client.appendToStream(
        s,
        Array.from({ length: 100 }, (_, j) => event(`${p}Old`, { i: i * 100 + j })),
      );
    }
    const sub = env.client.subscribeToAll({
      fromPosition: start.position!,
      filter: eventTypeFilter({ prefixes: [p] }),
    });
    const rec = record(sub);
    let caughtUps = 0;
    sub.on('caughtUp', () => caughtUps++);
    // Appended one by one while the subscription works through the 1,500 old ones.
    const writer = (async () => {
      for (let i = 0; i < 150; i++) await env.client.appendToStream(s, [event(`${p}New`, { i })]);
    })();
    await writer;
    await rec.until(() => rec.events.length >= 1_650, 10_000);
    await sleep(50); // a repeat would show up now
    await sub.unsubscribe();
    const got = rec.events.map((e) => `${e.type.slice(p.length)}${(e.data as { i: number }).i}`);
    expect(got).toEqual([
      ...Array.from({ length: 1_500 }, (_, i) => `Old${i}`),
      ...Array.from({ length: 150 }, (_, i) => `New${i}`),
    ]);
    expect(caughtUps).toBeGreaterThanOrEqual(1);
  });

  it('a live consumer that stops reading: the server falls back to the log and delivers everything once, in order', async () => {
    const p = prefix();
    const s = stream();
    const sub = env.client.subscribeToAll({ fromPosition: END, filter: eventTypeFilter({ prefixes: [p] }) });
    sub.on('error', () => {});
    let caughtUps = 0;
    sub.on('caughtUp', () => caughtUps++);
    const events = sub[Symbol.asyncIterator]();
    await new Promise((resolve) => sub.once('caughtUp', resolve));
    // Nobody reads from here on: HTTP/2 flow control stops the server's writes while 2,000
    // events arrive, far more than its 32-entry live channel holds.
    const payload = 'w'.repeat(1_000);
    for (let i = 0; i < 20; i++) {
      await env.client.appendToStream(
        s,
        Array.from({ length: 100 }, (_, j) => event(`${p}Flood`, { i: i * 100 + j, payload })),
      );
    }
    const seen: number[] = [];
    while (seen.length < 2_000) {
      const next = await events.next();
      if (next.done) throw new Error(`subscription ended after ${seen.length} events`);
      seen.push((next.value.event!.data as { i: number }).i);
    }
    // It fell behind (live entries dropped), caught up again from the log, and said so: that
    // caught-up follows the events the catch-up read, so it may still be on its way.
    for (const waitUntil = Date.now() + 5_000; caughtUps < 2 && Date.now() < waitUntil;) await sleep(10);
    await sub.unsubscribe();
    expect(seen).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
    expect(caughtUps).toBeGreaterThanOrEqual(2);
  });

  it('a consumer that pauses between events while 16 writers append, through a dropped connection, sees every event once, in order', async () => {
    const p = prefix();
    const WRITERS = 16;
    const PER_WRITER = 20;
    const start = await env.client.appendToStream(stream(), [event('Start')]);

    // Each writer appends to its own stream with exact revisions; a write cut by the drop is
    // retried with the same event, which the server acknowledges if it had landed.
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const s = stream();
      for (let n = 0; n < PER_WRITER; n++) {
        const e = event(`${p}W`, { w, n });
        const expectedRevision = n === 0 ? ('no_stream' as const) : BigInt(n - 1);
        for (let attempt = 1; ; attempt++) {
          try {
            await env.client.appendToStream(s, [e], { expectedRevision });
            break;
          } catch (err) {
            if (attempt >= 100) throw err;
            await sleep(20);
          }
        }
      }
    });

    const seen: Array<{ w: number; n: number; commit: bigint }> = [];
    let from: Position = start.position!;
    let dropped = false;
    let resubscribed = 0;
    const deadline = Date.now() + 15_000;
    while (seen.length < WRITERS * PER_WRITER && Date.now() < deadline) {
      const sub = env.client.subscribeToAll({ fromPosition: from, filter: eventTypeFilter({ prefixes: [p] }) });
      sub.on('error', () => {}); // reported through the iterator
      try {
        for await (const r of sub as AsyncIterable<ResolvedEvent>) {
          const { w, n } = r.event!.data as { w: number; n: number };
          seen.push({ w, n, commit: r.event!.position!.commit });
          from = r.event!.position!;
          await sleep(seen.length % 7 === 0 ? 3 : 0); // the consumer pauses
          if (seen.length === 60 && !dropped) {
            dropped = true;
            await env.server.dropConnections(); // …and the connection goes during a pause
          }
          if (seen.length === WRITERS * PER_WRITER) break;
        }
      } catch {
        resubscribed++;
        await sleep(50);
      } finally {
        await sub.unsubscribe().catch(() => {});
      }
    }
    await Promise.all(writers);

    expect(dropped).toBe(true);
    expect(resubscribed).toBeGreaterThanOrEqual(1);
    expect(new Set(seen.map(({ w, n }) => `${w}/${n}`)).size).toBe(WRITERS * PER_WRITER);
    expect(seen).toHaveLength(WRITERS * PER_WRITER);
    for (let i = 1; i < seen.length; i++) expect(seen[i].commit).toBeGreaterThan(seen[i - 1].commit);
    for (let w = 0; w < WRITERS; w++) {
      expect(seen.filter((x) => x.w === w).map((x) => x.n)).toEqual(Array.from({ length: PER_WRITER }, (_, n) => n));
    }
  }, 30_000);
});

/**
 * The esdb adapter against the gRPC test server (always), and against a real EventStoreDB when
 * EVENTSTORE_CONNECTION_STRING is set (e.g. `docker compose up eventstore`). The test server
 * advertises BatchAppend as a 21.10+ server does, so the suite runs on the client's BatchAppend
 * path; the old `Append` path (a server without ServerFeatures) is checked below.
 */
import { randomUUID } from 'node:crypto';
import { WrongExpectedVersionError } from '../../libs/event-store/src/errors';
import { NO_STREAM } from '../../libs/event-store/src/event-store.port';
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { describeEventStoreConformance, ev } from '../../libs/event-store/src/testing/conformance';
import { startEsdbTestServer, type ServerStats } from '../esdb-test-server/harness';
import { describeConformanceOnTestServer } from './test-server-conformance';

describeConformanceOnTestServer('esdb (test server)');

describe('which append path the adapter takes', () => {
  const appends = (stats: ServerStats) => ({ batch: stats.batchAppends, append: stats.calls['Streams/Append'] ?? 0 });

  it.each([
    ['a 21.10+ server (ServerFeatures advertises BatchAppend)', true, { batch: 3, append: 0 }],
    ['an older server (no ServerFeatures)', false, { batch: 0, append: 3 }],
  ])('%s', async (_, serverFeatures, expected) => {
    const target = await startEsdbTestServer({ serverFeatures });
    const store = new EsdbEventStore(target.connectionString);
    try {
      const s = `path-${randomUUID()}`;
      const events = [ev('t.A'), ev('t.B')];
      await store.appendToStream(s, events, { expectedRevision: NO_STREAM });
      // An idempotent re-append and a conflict, answered on that path.
      expect((await store.appendToStream(s, events, { expectedRevision: NO_STREAM })).nextExpectedRevision).toBe(1n);
      const err = await store.appendToStream(s, [ev('t.C')], { expectedRevision: 0n }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect(err).toMatchObject({ expected: 0n, actual: 1n });
      expect(appends(await target.stats())).toEqual(expected);
    } finally {
      await store.close();
      await target.stop();
    }
  });
});

const realServer = process.env.EVENTSTORE_CONNECTION_STRING;
if (realServer) {
  describeEventStoreConformance('esdb (EVENTSTORE_CONNECTION_STRING)', {
    serverBacked: false,
    sharedByInstances: true,
    setup: async () => ({
      store: new EsdbEventStore(realServer),
      openAnother: async () => new EsdbEventStore(realServer),
    }),
  });
}

/**
 * The esdb adapter against the gRPC test server (always), and against a real EventStoreDB when
 * EVENTSTORE_CONNECTION_STRING is set (e.g. `docker compose up eventstore`).
 */
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { describeEventStoreConformance } from '../../libs/event-store/src/testing/conformance';
import { startEsdbTestServer, type EsdbTestServer } from '../esdb-test-server/harness';

let server: EsdbTestServer;

describeEventStoreConformance('esdb (test server)', {
  serverBacked: true,
  setup: async () => {
    server = await startEsdbTestServer();
    const open = () => new EsdbEventStore({ connectionString: server.connectionString, resubscribeDelayMs: { min: 50, max: 1_000 } });
    return {
      store: open(),
      restartServer: () => server.restart(),
      openAnother: async () => open(),
    };
  },
  teardown: async () => {
    await server?.stop();
  },
});

const realServer = process.env.EVENTSTORE_CONNECTION_STRING;
if (realServer) {
  describeEventStoreConformance('esdb (EVENTSTORE_CONNECTION_STRING)', {
    serverBacked: false,
    setup: async () => ({
      store: new EsdbEventStore(realServer),
      openAnother: async () => new EsdbEventStore(realServer),
    }),
  });
}

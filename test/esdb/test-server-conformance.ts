/** The conformance suite against a fresh EventStoreDB test server, plaintext or secure. */
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { describeEventStoreConformance } from '../../libs/event-store/src/testing/conformance';
import { startEsdbTestServer, type EsdbTestServer, type EsdbTestServerOptions } from '../esdb-test-server/harness';

export function describeConformanceOnTestServer(name: string, serverOptions: EsdbTestServerOptions = {}): void {
  let server: EsdbTestServer;
  describeEventStoreConformance(name, {
    serverBacked: true,
    sharedByInstances: true,
    setup: async () => {
      server = await startEsdbTestServer(serverOptions);
      const open = () =>
        new EsdbEventStore({ connectionString: server.connectionString, resubscribeDelayMs: { min: 50, max: 1_000 } });
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
}

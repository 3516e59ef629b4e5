/**
 * The store as production runs it (issue #48): the test server over TLS with a certificate from
 * a test CA, and credentials checked on every call. The adapter's secure path — the client's TLS
 * channel, its CA-file handling, Basic credentials in call metadata — passes the whole conformance
 * suite; what the server refuses (wrong password, no credentials, an untrusted certificate) stops
 * a service start with one line naming the cause.
 */
import { AccessDeniedError, EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { EsdbEventStore } from '../../libs/event-store/src/esdb';
import { ev } from '../../libs/event-store/src/testing/conformance';
import { startEsdbTestServer, type EsdbTestServer } from '../esdb-test-server/harness';
import { describeConformanceOnTestServer } from './test-server-conformance';
import { startExpectingFailure } from '../support/cluster';
import { makeTestPki } from '../support/tls-certs';

describeConformanceOnTestServer('esdb (test server, TLS and credentials)', { secure: true });

describe('a secure node refuses what the real one refuses', () => {
  let node: EsdbTestServer;
  beforeAll(async () => {
    node = await startEsdbTestServer({ secure: true, users: { admin: 'changeit', ops: 'opspass' } });
  });
  afterAll(async () => node?.stop());

  async function appendWith(connectionString: string): Promise<unknown> {
    const client = EventStoreDBClient.connectionString(connectionString);
    try {
      await client.appendToStream('secure-check', jsonEvent({ type: 't.Checked', data: {} }));
      return 'written';
    } catch (err) {
      return err;
    } finally {
      await client.dispose();
    }
  }

  it('every configured user may write; a wrong password and no credentials are access denied', async () => {
    expect(await appendWith(node.connectionString)).toBe('written');
    expect(await appendWith(node.connectionString.replace('admin:changeit', 'ops:opspass'))).toBe('written');
    const wrong = await appendWith(node.connectionString.replace('admin:changeit', 'admin:nope'));
    expect(wrong).toBeInstanceOf(AccessDeniedError);
    expect(wrong).toMatchObject({ code: 16 }); // UNAUTHENTICATED, as the node's HTTP 401
    const anonymous = await appendWith(node.connectionString.replace('admin:changeit@', ''));
    expect(anonymous).toBeInstanceOf(AccessDeniedError);
    expect(anonymous).toMatchObject({ code: 7 }); // PERMISSION_DENIED + `exception: access-denied`
  });

  it('a client without the CA, or speaking plaintext, gets no connection', async () => {
    const untrusted = await appendWith(node.connectionString.replace(/&tlsCAFile=.*$/, ''));
    expect(String(untrusted)).toMatch(/unable to verify the first certificate/);
    const plaintext = await appendWith(`esdb://localhost:${node.port}?tls=false`);
    expect(plaintext).toBeInstanceOf(Error);
    expect(plaintext).not.toBe('written');
  });
});

describe("the head read carries no large event's body", () => {
  it('passes over skipped types on the server: the newest other event, whatever was appended after it', async () => {
    const node = await startEsdbTestServer({ secure: true });
    const store = new EsdbEventStore(node.connectionString);
    try {
      const small = await store.appendToStream(`head-${randomUUID()}`, [ev('t.Small')]);
      // Content chunks of 600 KB (one per append: two would pass the 1 MiB append limit).
      const chunk = () => ev('documentcontent.ContentChunk', { content_base64: 'A'.repeat(600_000) });
      let last = small;
      for (let i = 0; i < 3; i++) last = await store.appendToStream(`content-${randomUUID()}`, [chunk()]);
      expect(await store.headPosition({ skipTypes: ['documentcontent.ContentChunk'] })).toEqual(small.position);
      // Unfiltered it is the newest chunk: the filter is what keeps a chunk's body off the wire.
      expect(await store.headPosition()).toEqual(last.position);
    } finally {
      await store.close();
      await node.stop();
    }
  });
});

describe('a service start the store refuses stops with one line naming the cause', () => {
  let node: EsdbTestServer;
  beforeAll(async () => {
    node = await startEsdbTestServer({ secure: true });
  });
  afterAll(async () => node?.stop());

  const start = (connectionString: string) =>
    startExpectingFailure({ EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: connectionString, LOG_LEVEL: 'info' });

  it('a wrong password', async () => {
    const failed = await start(node.connectionString.replace('admin:changeit', 'admin:wrong'));
    expect(failed.exitCode).toBe(1);
    expect(failed.output.trim().split('\n')).toEqual([
      'EVENTSTORE_CONNECTION_STRING: EventStoreDB refused the user or password of the connection string (wrong credentials)',
    ]);
    expect(failed.output).not.toContain('wrong@'); // the password is never repeated
  }, 90_000);

  it('no credentials', async () => {
    const failed = await start(node.connectionString.replace('admin:changeit@', ''));
    expect(failed.exitCode).toBe(1);
    expect(failed.output.trim().split('\n')).toEqual([
      expect.stringMatching(/^EVENTSTORE_CONNECTION_STRING: .*denied/),
    ]);
  }, 90_000);

  it('a CA file that did not sign the node certificate', async () => {
    const otherCa = makeTestPki('Another');
    const failed = await start(node.connectionString.replace(node.caFile!, otherCa.caFile));
    rmSync(otherCa.dir, { recursive: true, force: true });
    expect(failed.exitCode).toBe(1);
    expect(failed.output.trim().split('\n')).toEqual([
      "EVENTSTORE_CONNECTION_STRING: EventStoreDB's TLS certificate is not trusted (unable to verify the first certificate): tlsCAFile must name the CA that signed the node's certificate",
    ]);
  }, 90_000);
});

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { v7 as uuidv7 } from 'uuid';
import { EVENT_STORE, type EventStore, NO_STREAM } from '@filing/event-store';
import { buildMetadata, ProjectionRunner, toEventData } from '@filing/platform';
import { chunkEventId, contentAppends } from '../libs/documents/src/content/content-chunks';
import { bearer } from '../test/support/auth';
import { startBenchService } from './bench-service';
import { printComparison } from './report';

const MiB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_CONTENT_ROUNDS ?? 15);

/**
 * Download throughput of a 10 MiB document over HTTP (`GET …/content`, sqlite store): content
 * encrypted with the document's data key (decrypted chunk by chunk, SHA-256 checked) next to the
 * same size stored as the version before encryption stored it (plaintext chunks, the read path
 * the service still has for them until `documents:encrypt`): the same service, interleaved rounds.
 */
export async function contentBench(): Promise<void> {
  const service = await startBenchService('content');
  try {
    const { client, url } = service;
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${url}/external-api/v1${path}`, {
        ...init,
        headers: { ...bearer(client.token), 'content-type': 'application/json' },
      });
    const entity = (await (
      await call('/entities', { method: 'POST', body: JSON.stringify({ name: 'Bench LLC', entity_type: 'llc' }) })
    ).json()) as { id: string };
    const encrypted = randomBytes(10 * MiB);
    const added = await call('/documents', {
      method: 'POST',
      body: JSON.stringify({
        entity_id: entity.id,
        title: 'Encrypted',
        document_type: 'bench',
        content_type: 'application/octet-stream',
        content_base64: encrypted.toString('base64'),
      }),
    });
    const encryptedId = ((await added.json()) as { id: string }).id;
    const plain = randomBytes(10 * MiB);
    const plainId = await addPlaintextDocument(service.app.get<EventStore>(EVENT_STORE), client, entity.id, plain);
    const head = await service.app.get<EventStore>(EVENT_STORE).headPosition();
    await service.app.get(ProjectionRunner).waitFor(head, 60_000);

    const download = async (id: string, expected: Buffer): Promise<number> => {
      const started = performance.now();
      const bytes = Buffer.from(await (await call(`/documents/${id}/content`)).arrayBuffer());
      const ms = performance.now() - started;
      if (!bytes.equals(expected)) throw new Error(`document ${id} did not download byte for byte`);
      return ms;
    };
    // One warm-up each, then interleaved rounds: both see the same machine load.
    await download(encryptedId, encrypted);
    await download(plainId, plain);
    let encryptedMs = 0;
    let plainMs = 0;
    for (let i = 0; i < ROUNDS; i++) {
      encryptedMs += await download(encryptedId, encrypted);
      plainMs += await download(plainId, plain);
    }
    printComparison(
      `GET …/content of 10 MiB, encrypted (${ROUNDS} rounds)`,
      (ROUNDS * 10) / (encryptedMs / 1000),
      'same size, plaintext chunks (the read path before)',
      (ROUNDS * 10) / (plainMs / 1000),
      'MiB/s',
    );
  } finally {
    await service.app.close();
    rmSync(service.dataDir, { recursive: true, force: true });
  }
}

/** A document as the version before encryption wrote it: plaintext chunks, then its DocumentAdded. */
async function addPlaintextDocument(
  store: EventStore,
  client: { accountId: string | null; clientId: string },
  entityId: string,
  content: Buffer,
): Promise<string> {
  const id = uuidv7();
  const metadata = buildMetadata({
    account_id: client.accountId,
    actor: `client:${client.clientId}`,
    correlation_id: randomUUID(),
    causation_id: null,
  });
  let index = 0;
  let expectedRevision: bigint | typeof NO_STREAM = NO_STREAM;
  for (const chunks of contentAppends(id, content)) {
    const events = chunks.map((c) => toEventData(c, metadata, chunkEventId(id, index++)));
    expectedRevision = (await store.appendToStream(`documentcontent-${id}`, events, { expectedRevision }))
      .nextExpectedRevision;
  }
  const data = {
    document_id: id,
    entity_id: entityId,
    order_id: null,
    title: 'Plaintext',
    document_type: 'bench',
    content_type: 'application/octet-stream',
    size_bytes: content.length,
    sha256: createHash('sha256').update(content).digest('hex'),
  };
  await store.appendToStream(`document-${id}`, [toEventData({ type: 'documents.DocumentAdded', data }, metadata)]);
  return id;
}

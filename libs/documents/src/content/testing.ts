import type { EventStore } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { createHash } from 'node:crypto';
import { DocumentAggregate } from '../document.aggregate';

/**
 * For the specs: a document's own events (its DocumentAdded naming the bytes' size and SHA-256),
 * without writing the bytes anywhere, as a test of where the bytes live needs them.
 */
export async function appendDocumentAdded(
  store: EventStore,
  context: CommandContext & { account_id: string },
  id: string,
  bytes: Buffer,
): Promise<void> {
  const input = {
    entity_id: '0193a5b2-0000-7000-8000-0000000000e1',
    order_id: null,
    title: 'T',
    document_type: 'd',
    content_type: 'application/pdf',
    size_bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  await DocumentAggregate.run(store, context, { kind: 'add', id, account_id: context.account_id, input });
}

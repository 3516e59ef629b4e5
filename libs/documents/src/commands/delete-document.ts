import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import { type CommandContext, expectedVersion, requireAccount, type WriteResult } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { DocumentContentStore } from '../content/document-content.store';
import type { Document } from '../document';
import { DocumentAggregate } from '../document.aggregate';

export class DeleteDocumentCommand extends Command<WriteResult<Document>> {
  constructor(
    readonly context: CommandContext,
    readonly documentId: string,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

/**
 * Appends DocumentDeleted, then removes the bytes. The event comes first: until it is recorded
 * the document exists and must keep its content. (A crash in between leaves bytes that nothing
 * serves: the read model drops the document with the event.)
 */
@CommandHandler(DeleteDocumentCommand)
export class DeleteDocumentHandler implements ICommandHandler<DeleteDocumentCommand, WriteResult<Document>> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly contents: DocumentContentStore,
  ) {}

  async execute({ context, documentId, ifMatch }: DeleteDocumentCommand): Promise<WriteResult<Document>> {
    const account_id = requireAccount(context);
    const expected_version = expectedVersion(ifMatch);
    const result = await DocumentAggregate.run(this.store, context, { kind: 'delete', id: documentId, account_id, expected_version });
    this.contents.remove(documentId);
    return result;
  }
}

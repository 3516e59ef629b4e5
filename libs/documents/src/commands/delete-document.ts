import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import { type CommandContext, expectedVersion, requireAccount, type WriteResult } from '@filing/platform';
import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { contentStreamId, DocumentContentStore } from '../content/document-content.store';
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
 * Appends DocumentDeleted, then soft-deletes the content stream. The event comes first: until it
 * is recorded the document exists and must keep its content. Once it is, the delete has happened
 * (a 204, not a 503 that would say nothing was written); content that then cannot be removed is
 * logged and stays as an orphan that nothing serves, since every read model drops the document.
 */
@CommandHandler(DeleteDocumentCommand)
export class DeleteDocumentHandler implements ICommandHandler<DeleteDocumentCommand, WriteResult<Document>> {
  private readonly logger = new Logger(DeleteDocumentHandler.name);

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly contents: DocumentContentStore,
  ) {}

  async execute({ context, documentId, ifMatch }: DeleteDocumentCommand): Promise<WriteResult<Document>> {
    const account_id = requireAccount(context);
    const expected_version = expectedVersion(ifMatch);
    const result = await DocumentAggregate.run(this.store, context, {
      kind: 'delete',
      id: documentId,
      account_id,
      expected_version,
    });
    try {
      await this.contents.remove(documentId);
    } catch (err) {
      this.logger.warn(
        `Document ${documentId} is deleted but its content stream ${contentStreamId(documentId)} could not be: ${(err as Error).message}`,
      );
    }
    return result;
  }
}

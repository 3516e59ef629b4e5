import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import {
  type CommandContext,
  expectedVersion,
  NotFoundError,
  requireAccount,
  type WriteResult,
} from '@filing/platform';
import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { DocumentContentStore, keyStreamId } from '../content/document-content.store';
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
 * Appends DocumentDeleted, then destroys the document's key (and so its content) in the same
 * command. Each write is appended whole or not at all; the order decides what a crash between
 * them leaves:
 * - the event first: until it is recorded the document exists and must keep its content. A
 *   crash before it leaves the document as it was (the client's DELETE failed; it retries);
 * - then the key: a crash (or a store failure) after the event leaves a deleted document whose
 *   key still exists. Nothing serves it (every read model dropped the document), and it is
 *   destroyed by the next DELETE of the document (answered 404, as for any deleted document),
 *   or by `filing secrets:reseal`, which destroys the key of every deleted document it finds.
 * Destroying first instead would, on a crash, leave a live document whose bytes are gone.
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
    let result: WriteResult<Document>;
    try {
      result = await DocumentAggregate.run(this.store, context, {
        kind: 'delete',
        id: documentId,
        account_id,
        expected_version,
      });
    } catch (err) {
      if (err instanceof NotFoundError) await this.finishEarlierDelete(documentId, account_id);
      throw err;
    }
    try {
      await this.contents.destroy(documentId);
    } catch (err) {
      this.logger.warn(
        `Document ${documentId} is deleted but its key stream ${keyStreamId(documentId)} could not be destroyed yet ` +
          `(a DELETE of it again, or filing secrets:reseal, will): ${(err as Error).message}`,
      );
    }
    return result;
  }

  /** A DELETE of a document already deleted: its key may have outlived an interrupted delete. */
  private async finishEarlierDelete(documentId: string, accountId: string): Promise<void> {
    const { state } = await DocumentAggregate.load(this.store, documentId);
    if (state?.deleted && state.account_id === accountId) await this.contents.destroy(documentId);
  }
}

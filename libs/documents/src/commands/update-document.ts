import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import type { CommandContext } from '@filing/platform';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DocumentChanges } from '../document';
import { accountOf, type DocumentWriteResult, runDocumentCommand } from './add-document';

/** PATCH: the writable metadata (`title`, `document_type`); the content never changes. */
export class UpdateDocumentCommand extends Command<DocumentWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly documentId: string,
    readonly changes: DocumentChanges,
    /** The client's If-Match: a mismatch is a 412. */
    readonly ifMatch?: StreamRevision,
  ) {
    super();
  }
}

@CommandHandler(UpdateDocumentCommand)
export class UpdateDocumentHandler implements ICommandHandler<UpdateDocumentCommand, DocumentWriteResult> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  execute({ context, documentId, changes, ifMatch }: UpdateDocumentCommand): Promise<DocumentWriteResult> {
    return runDocumentCommand(this.store, context, {
      kind: 'update',
      document_id: documentId,
      account_id: accountOf(context),
      changes,
      // Checked by decide() after ownership, not by handleCommand's ifMatch (see document.ts).
      expected_version: ifMatch === undefined ? undefined : Number(ifMatch),
    });
  }
}

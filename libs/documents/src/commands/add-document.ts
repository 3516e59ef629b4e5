import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  type CommandContext,
  newResourceId,
  ReferenceChecker,
  requireAccount,
  type WriteResult,
  extend,
} from '@filing/platform';
import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { DocumentContentStore } from '../content/document-content.store';
import { decide, type Document, type DocumentCommand, initialDocumentState } from '../document';
import { DocumentAggregate } from '../document.aggregate';

/** A new document as the client sends it, the content decoded. */
export interface NewDocument {
  readonly entity_id: string;
  readonly order_id?: string | null;
  readonly title: string;
  readonly document_type: string;
  readonly content_type: string;
  readonly content: Buffer;
}

export class AddDocumentCommand extends Command<WriteResult<Document>> {
  constructor(
    readonly context: CommandContext,
    readonly document: NewDocument,
    readonly documentId: string = newResourceId(),
  ) {
    super();
  }
}

/**
 * All or nothing: the document's key and its encrypted bytes are written first (key stream, then
 * content stream), then the DocumentAdded that names them, so the event never names content that
 * is not all there. If a write fails, the key is destroyed again (and the content stream
 * deleted); it was never visible, since content is only served for a document the read model
 * holds (and only the event puts it there).
 */
@CommandHandler(AddDocumentCommand)
export class AddDocumentHandler implements ICommandHandler<AddDocumentCommand, WriteResult<Document>> {
  private readonly logger = new Logger(AddDocumentHandler.name);

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
    private readonly contents: DocumentContentStore,
  ) {}

  async execute({ context, document, documentId }: AddDocumentCommand): Promise<WriteResult<Document>> {
    const accountId = requireAccount(context);
    const { content, ...metadata } = document;
    const checked = await this.references.normalized(accountId, metadata, ['entity_id', 'order_id']);

    const sha256 = createHash('sha256').update(content).digest('hex');
    const command: DocumentCommand = {
      kind: 'add',
      id: documentId,
      account_id: accountId,
      input: extend(checked, { order_id: checked.order_id ?? null, size_bytes: content.length, sha256 }),
    };
    // decide() is pure: refuse bad input before writing megabytes.
    decide(initialDocumentState, command);

    try {
      await this.contents.write(context, documentId, content);
      return await DocumentAggregate.run(this.store, context, command);
    } catch (err) {
      await this.discardUnlessRecorded(documentId);
      throw err;
    }
  }

  /**
   * Destroys the key and content of a document whose write failed, unless its DocumentAdded made it
   * after all (an append can fail after the store wrote it, e.g. a timeout). When the store cannot
   * tell, the content stays: an orphan is invisible, a document without its content is not.
   */
  private async discardUnlessRecorded(documentId: string): Promise<void> {
    try {
      const recorded = await this.store.readStream(DocumentAggregate.streamId(documentId), { maxCount: 1 });
      if (recorded.length === 0) await this.contents.destroy(documentId);
    } catch (err) {
      this.logger.warn(
        `Kept the content stream of document ${documentId} after a failed write: ${(err as Error).message}`,
      );
    }
  }
}

import { EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { type CommandContext, handleCommand, ReferenceChecker, streamName } from '@filing/platform';
import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { DocumentContentStore } from '../content/document-content.store';
import { decide, type Document, type DocumentCommand, evolve, initialDocumentState } from '../document';
import { DOCUMENT_EVENT_SCHEMA_VERSIONS, DOCUMENT_STREAM_CONTEXT, type DocumentEvent } from '../document.events';

/** What a document write returns: the position read-your-writes waits for, and the document after it. */
export interface DocumentWriteResult {
  /** null when nothing was appended (a no-op update). */
  readonly position: Position | null;
  readonly document: Document;
}

/** A new document as the client sends it, the content decoded. */
export interface NewDocument {
  readonly entity_id: string;
  readonly order_id?: string | null;
  readonly title: string;
  readonly document_type: string;
  readonly content_type: string;
  readonly content: Buffer;
}

export class AddDocumentCommand extends Command<DocumentWriteResult> {
  constructor(
    readonly context: CommandContext,
    readonly document: NewDocument,
    /** UUID v7, so ids sort by creation (lists are ordered by id). */
    readonly documentId: string = uuidv7(),
  ) {
    super();
  }
}

/**
 * All or nothing: the bytes are stored under the new document's id first, then the event is
 * appended. If the append fails, the bytes are removed again; they were never visible, since
 * content is only served for a document the read model holds (and only the event puts it there).
 */
@CommandHandler(AddDocumentCommand)
export class AddDocumentHandler implements ICommandHandler<AddDocumentCommand, DocumentWriteResult> {
  private readonly logger = new Logger(AddDocumentHandler.name);

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly references: ReferenceChecker,
    private readonly contents: DocumentContentStore,
  ) {}

  async execute({ context, document, documentId }: AddDocumentCommand): Promise<DocumentWriteResult> {
    const accountId = accountOf(context);
    const { content, ...metadata } = document;
    // Ids are stored lower-case; a client may send a UUID in capitals.
    const entityId = lowerCase(metadata.entity_id);
    const orderId = metadata.order_id == null ? null : lowerCase(metadata.order_id);
    await this.references.assertExist(accountId, { entity_id: entityId, order_id: orderId });

    const sha256 = createHash('sha256').update(content).digest('hex');
    const command: DocumentCommand = {
      kind: 'add',
      document_id: documentId,
      account_id: accountId,
      input: { ...metadata, entity_id: entityId, order_id: orderId, size_bytes: content.length, sha256 },
    };
    // decide() is pure: refuse bad input before writing megabytes.
    decide(initialDocumentState, command);

    this.contents.put(documentId, accountId, sha256, content);
    try {
      return await runDocumentCommand(this.store, context, command);
    } catch (err) {
      await this.discardUnlessRecorded(documentId);
      throw err;
    }
  }

  /**
   * Removes the bytes of a document whose append failed, unless the event made it after all
   * (an append can fail after the store wrote it, e.g. a timeout). When the store cannot tell,
   * the bytes stay: an orphan is invisible, a document without its content is not.
   */
  private async discardUnlessRecorded(documentId: string): Promise<void> {
    try {
      const recorded = await this.store.readStream(streamName(DOCUMENT_STREAM_CONTEXT, documentId), { maxCount: 1 });
      if (recorded.length === 0) this.contents.remove(documentId);
    } catch (err) {
      this.logger.warn(`Kept the content of document ${documentId} after a failed append: ${(err as Error).message}`);
    }
  }
}

/** Load → decide → append for any document command (the shared part of the handlers). */
export async function runDocumentCommand(store: EventStore, context: CommandContext, command: DocumentCommand): Promise<DocumentWriteResult> {
  const result = await handleCommand<ReturnType<typeof evolve>, DocumentEvent, DocumentCommand>({
    store,
    streamId: streamName(DOCUMENT_STREAM_CONTEXT, command.document_id),
    initialState: initialDocumentState,
    evolve,
    decide,
    command,
    context,
    schemaVersion: (type) => DOCUMENT_EVENT_SCHEMA_VERSIONS[type as DocumentEvent['type']] ?? 1,
  });
  // decide() either appended or threw for a missing document, so the state exists here.
  return { position: result.position, document: result.state! };
}

function lowerCase(id: string): string {
  return typeof id === 'string' ? id.toLowerCase() : id;
}

/** Documents always belong to an account; a context without one is a wiring bug, not bad input. */
export function accountOf(context: CommandContext): string {
  if (!context.account_id) throw new Error('Document commands need an account');
  return context.account_id;
}

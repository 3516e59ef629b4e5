import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  AccountId,
  type CommandContext,
  Ctx,
  CursorCodec,
  createValidationPipe,
  type HistoryItem,
  IfMatch,
  NotFoundError,
  type Page,
  PageQueryDto,
  pageRequest,
  ReadYourWrites,
  readHistory,
  ResourceIdPipe,
  streamName,
  withETag,
  ApiHistoryResponse,
  ApiPageResponse,
  ApiResourceResponse,
} from '@filing/platform';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Res, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiNoContentResponse, ApiOkResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AddDocumentCommand, type DocumentWriteResult } from '../commands/add-document';
import { DeleteDocumentCommand } from '../commands/delete-document';
import { UpdateDocumentCommand } from '../commands/update-document';
import { DocumentContentStore } from '../content/document-content.store';
import { DOCUMENT_DELETED, DOCUMENT_STREAM_CONTEXT } from '../document.events';
import { DOCUMENTS_COLLECTION, DocumentsQueries, type DocumentView, toDocumentView } from '../read-model/documents.queries';
import { CreateDocumentDto, ListDocumentsQueryDto, UpdateDocumentDto, DocumentDto } from './documents.dto';

export const DOCUMENTS_PATH = '/external-api/v1/documents';
const HISTORY_COLLECTION = 'documents/history';

/**
 * Thin: validate (DTOs, pipes), send a command or a query, answer. Every query is scoped by the
 * token's account; another account's document, and a deleted one, is a 404 like a missing one.
 */
@Controller(DOCUMENTS_PATH.slice(1))
@UsePipes(createValidationPipe())
export class DocumentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: DocumentsQueries,
    private readonly contents: DocumentContentStore,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @ApiResourceResponse(DocumentDto, { created: true })
  async create(
    @Body() dto: CreateDocumentDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DocumentView> {
    const { content_base64, ...metadata } = dto;
    const content = Buffer.from(content_base64, 'base64');
    const result = await this.commands.execute(new AddDocumentCommand(ctx, { ...metadata, content }));
    const document = await this.readBack(ctx, result);
    reply.header('location', `${DOCUMENTS_PATH}/${document.id}`);
    return withETag(reply, document);
  }

  @Get()
  @ApiPageResponse(DocumentDto)
  list(@Query() query: ListDocumentsQueryDto, @AccountId() accountId: string): Page<DocumentView> {
    return this.queries.list(accountId, query, pageRequest(query, DOCUMENTS_COLLECTION, 'string', this.cursors));
  }

  @Get(':id')
  @ApiResourceResponse(DocumentDto)
  get(@Param('id', ResourceIdPipe) id: string, @AccountId() accountId: string, @Res({ passthrough: true }) reply: FastifyReply): DocumentView {
    return withETag(reply, this.found(accountId, id));
  }

  /**
   * The bytes as stored, with their media type and length. The ETag is the document's version,
   * as on the resource; `Repr-Digest` (RFC 9530) carries the SHA-256. Served as an attachment
   * with `nosniff`: the content is the customer's, never a page of this origin.
   */
  @Get(':id/content')
  @ApiOkResponse({
    description: 'The bytes, with the content type they were added with',
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  })
  content(@Param('id', ResourceIdPipe) id: string, @AccountId() accountId: string, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const document = this.found(accountId, id);
    const bytes = this.contents.get(id, accountId);
    // The read model holds the document, so its bytes were stored before its event: a missing
    // blob means the content store was lost (not restored with the events), a server fault.
    if (bytes === null) throw new Error(`The content of document ${id} is missing from the content store`);
    reply
      .header('content-type', document.content_type)
      .header('content-length', String(bytes.length))
      .header('content-disposition', 'attachment')
      .header('x-content-type-options', 'nosniff')
      .header('repr-digest', `sha-256=:${Buffer.from(document.sha256, 'hex').toString('base64')}:`);
    withETag(reply, document);
    return bytes;
  }

  @Patch(':id')
  @ApiResourceResponse(DocumentDto)
  async update(
    @Param('id', ResourceIdPipe) id: string,
    @Body() dto: UpdateDocumentDto,
    @IfMatch() ifMatch: bigint | undefined,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DocumentView> {
    const result = await this.commands.execute(new UpdateDocumentCommand(ctx, id, dto, ifMatch));
    return withETag(reply, await this.readBack(ctx, result));
  }

  /** 204; afterwards the document is a 404 on every route and its bytes are gone. */
  @Delete(':id')
  @ApiNoContentResponse({ description: 'Deleted: the document and its content answer 404 from now on' })
  @HttpCode(204)
  async remove(@Param('id', ResourceIdPipe) id: string, @IfMatch() ifMatch: bigint | undefined, @Ctx() ctx: CommandContext): Promise<void> {
    const result = await this.commands.execute(new DeleteDocumentCommand(ctx, id, ifMatch));
    await this.readYourWrites.await(result.position);
  }

  /** The document's events, oldest first; a deleted document has no history to show (404). */
  @Get(':id/history')
  @ApiHistoryResponse()
  async history(@Param('id', ResourceIdPipe) id: string, @Query() query: PageQueryDto, @AccountId() accountId: string): Promise<Page<HistoryItem>> {
    const streamId = streamName(DOCUMENT_STREAM_CONTEXT, id);
    const notFound = () => NotFoundError.of('document', id);
    const [last] = await this.store.readStream(streamId, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last?.type === DOCUMENT_DELETED) throw notFound();
    return readHistory({
      store: this.store,
      streamId,
      accountId,
      page: pageRequest(query, HISTORY_COLLECTION, 'number', this.cursors),
      collection: HISTORY_COLLECTION,
      notFound,
    });
  }

  private found(accountId: string, id: string): DocumentView {
    const document = this.queries.get(accountId, id);
    if (!document) throw NotFoundError.of('document', id);
    return document;
  }

  /**
   * Read-your-writes: wait until the read model has the write, then answer from it, as a GET
   * would. If the projections are late (the wait is bounded), answer from the command's state.
   */
  private async readBack(ctx: CommandContext, result: DocumentWriteResult): Promise<DocumentView> {
    await this.readYourWrites.await(result.position);
    return this.queries.get(ctx.account_id!, result.document.id) ?? toDocumentView(result.document);
  }
}

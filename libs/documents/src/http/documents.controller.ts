import type { StreamRevision } from '@filing/event-store';
import {
  ApiResourceResponse,
  type CommandContext,
  Ctx,
  IfMatch,
  NotFoundError,
  ResourceIdPipe,
  FamilyController,
  AccountId,
  withETag,
  extend,
} from '@filing/platform';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AddDocumentCommand } from '../commands/add-document';
import { DeleteDocumentCommand } from '../commands/delete-document';
import { DocumentContentStore } from '../content/document-content.store';
import { DocumentAggregate } from '../document.aggregate';
import { DOCUMENT_DELETED } from '../document.events';
import { DocumentsQueries } from '../read-model/documents.queries';
import { CreateDocumentDto, DocumentDto, ListDocumentsQueryDto, UpdateDocumentDto } from './documents.dto';

/**
 * `/external-api/v1/documents`: the family routes (a deleted document is a 404 on each, its
 * history too), and the documents' own: POST with the content, its bytes, DELETE.
 */
@Controller('external-api/v1/documents')
export class DocumentsController extends FamilyController({
  path: 'documents',
  aggregate: DocumentAggregate,
  queries: DocumentsQueries,
  dto: DocumentDto,
  listQuery: ListDocumentsQueryDto,
  update: UpdateDocumentDto,
  deletedBy: DOCUMENT_DELETED,
}) {
  constructor(private readonly contents: DocumentContentStore) {
    super();
  }

  @Post()
  @ApiResourceResponse(DocumentDto, { created: true })
  create(
    @Body() dto: CreateDocumentDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const { content_base64, ...metadata } = dto;
    return this.created(
      reply,
      new AddDocumentCommand(ctx, extend(metadata, { content: Buffer.from(content_base64, 'base64') })),
    );
  }

  /**
   * The bytes from the content stream, checked against the document's SHA-256 and size, with
   * their media type and length. The ETag is the document's version, as on the resource;
   * `Repr-Digest` (RFC 9530) carries the SHA-256. Served as an attachment with `nosniff`: the
   * content is the customer's, never a page of this origin.
   */
  @Get(':id/content')
  @ApiOkResponse({
    description: 'The bytes, with the content type they were added with',
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  })
  async content(
    @Param('id', ResourceIdPipe) id: string,
    @AccountId() accountId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const document = this.found(accountId, id);
    const bytes = await this.contents.read(id, document);
    if (bytes === null) {
      // Deleted on another instance a moment ago (this one's read model has not applied it yet).
      if (await this.deletedInStore(id)) throw NotFoundError.of(DocumentAggregate.streamPrefix, id);
      // The read model holds the document, so its content was written before its event: missing
      // content is a server fault (e.g. events restored without their content streams).
      throw new Error(`The content of document ${id} is missing from the event store`);
    }
    reply
      .header('content-type', document.content_type)
      .header('content-length', String(bytes.length))
      .header('content-disposition', 'attachment')
      .header('x-content-type-options', 'nosniff')
      .header('repr-digest', `sha-256=:${Buffer.from(document.sha256, 'hex').toString('base64')}:`);
    withETag(reply, document);
    return bytes;
  }

  private async deletedInStore(id: string): Promise<boolean> {
    const [last] = await this.store.readStream(DocumentAggregate.streamId(id), { direction: 'backwards', maxCount: 1 });
    return last?.type === DOCUMENT_DELETED;
  }

  /** 204; afterwards the document is a 404 on every route and its bytes are gone. */
  @Delete(':id')
  @ApiNoContentResponse({ description: 'Deleted: the document and its content answer 404 from now on' })
  @HttpCode(204)
  async remove(
    @Param('id', ResourceIdPipe) id: string,
    @IfMatch() ifMatch: StreamRevision | undefined,
    @Ctx() ctx: CommandContext,
  ): Promise<void> {
    const result = await this.commands.execute(new DeleteDocumentCommand(ctx, id, ifMatch));
    await this.readYourWrites.await(result.position);
  }
}

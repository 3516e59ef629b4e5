import { Module } from '@nestjs/common';
import { AddDocumentHandler } from './commands/add-document';
import { DeleteDocumentHandler } from './commands/delete-document';
import { DocumentContentStore } from './content/document-content.store';
import { DocumentKeys } from './content/document-keys.service';
import { LegacyContentImport } from './content/legacy-content-import';
import { DocumentAggregate } from './document.aggregate';
import { DocumentsController } from './http/documents.controller';
import { DocumentsProjection } from './read-model/documents.projection';
import { DocumentsQueries } from './read-model/documents.queries';

/**
 * Commands, read model and content store, no HTTP: what the CLI imports (replay and audit
 * rebuild this read model; the content is events in the store, which they only read). Needs
 * CqrsModule, the event store, ProjectionsModule, ReferencesModule and APP_CONFIG (global in both
 * apps).
 */
@Module({
  providers: [
    // write side
    AddDocumentHandler,
    DocumentAggregate.Handler,
    DeleteDocumentHandler,
    // the bytes: content streams in the event store
    DocumentContentStore,
    // their keys: re-seal, migration of plaintext content, account erasure (the CLI's)
    DocumentKeys,
    // read side
    DocumentsProjection,
    DocumentsQueries,
  ],
  exports: [DocumentsQueries, DocumentContentStore, DocumentKeys],
})
export class DocumentsCoreModule {}

/**
 * The documents context in the service: the core plus the HTTP API, and the one-time import of an
 * earlier version's DATA_DIR/documents.db (the service's start only: the CLI may run beside it).
 * Also needs ResourceApiModule.
 */
@Module({
  imports: [DocumentsCoreModule],
  controllers: [DocumentsController],
  providers: [LegacyContentImport],
})
export class DocumentsModule {}

import { APP_CONFIG, type AppConfig } from '@filing/platform';
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { join } from 'node:path';
import { AddDocumentHandler } from './commands/add-document';
import { DeleteDocumentHandler } from './commands/delete-document';
import { DOCUMENT_CONTENT_FILE, DocumentContentStore } from './content/document-content.store';
import { DocumentAggregate } from './document.aggregate';
import { DocumentsController } from './http/documents.controller';
import { DocumentsProjection } from './read-model/documents.projection';
import { DocumentsQueries } from './read-model/documents.queries';

/**
 * Commands, read model and content store, no HTTP: what the CLI imports (replay and audit
 * rebuild this read model; they never touch the content store). Needs CqrsModule, the event
 * store, ProjectionsModule, ReferencesModule and APP_CONFIG (global in both apps).
 */
@Module({
  providers: [
    // write side
    AddDocumentHandler,
    DocumentAggregate.Handler,
    DeleteDocumentHandler,
    // the bytes: DATA_DIR/documents.db, not a read model
    {
      provide: DocumentContentStore,
      useFactory: (config: AppConfig) => new DocumentContentStore(join(config.dataDir, DOCUMENT_CONTENT_FILE)),
      inject: [APP_CONFIG],
    },
    // read side
    DocumentsProjection,
    DocumentsQueries,
  ],
  exports: [DocumentsQueries, DocumentContentStore],
})
export class DocumentsCoreModule implements OnApplicationShutdown {
  constructor(@Inject(DocumentContentStore) private readonly contents: DocumentContentStore) {}

  onApplicationShutdown(): void {
    this.contents.close();
  }
}

/** The documents context in the service: the core plus the HTTP API. Also needs ResourceApiModule. */
@Module({
  imports: [DocumentsCoreModule],
  controllers: [DocumentsController],
})
export class DocumentsModule {}

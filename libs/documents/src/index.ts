/** What other modules and the apps may import from documents: its modules and its event contract. */
export { DocumentsModule, DocumentsCoreModule } from './documents.module';
export * from './document.events';
export { DocumentKeys, type EncryptReport, type Progress, type ResealReport } from './content/document-keys.service';
export { DeleteDocumentCommand } from './commands/delete-document';

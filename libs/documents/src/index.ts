/** What other modules and the apps may import from documents: its modules and its event contract. */
export { DocumentsModule, DocumentsCoreModule } from './documents.module';
export * from './document.events';

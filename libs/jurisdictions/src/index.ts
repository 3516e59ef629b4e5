/** What other modules and the apps may import from jurisdictions: its modules and its event contract. */
export { JurisdictionsModule, JurisdictionsCoreModule } from './jurisdictions.module';
export * from './jurisdiction.events';

/** What other modules and the apps may import from entities: its modules and its event contract. */
export { EntitiesModule, EntitiesCoreModule } from './entities.module';
export * from './entity.events';

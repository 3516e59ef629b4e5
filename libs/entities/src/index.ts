/** What other modules may import from entities: the module and its event contract, nothing else. */
export { EntitiesModule } from './entities.module';
export * from './entity.events';

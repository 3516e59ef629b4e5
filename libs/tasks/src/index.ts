/** What other modules and the apps may import from tasks: its modules and its event contract. */
export { TasksModule, TasksCoreModule } from './tasks.module';
export * from './task.events';

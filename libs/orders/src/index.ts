/** What other modules and the apps may import from orders: its modules, its event contract, and the operator's command. */
export { OrdersModule, OrdersCoreModule } from './orders.module';
export * from './order.events';
export { CompleteOrderCommand } from './commands/complete-order';

import { ReferenceChecker } from '@filing/platform';
import { Module, type OnModuleInit } from '@nestjs/common';
import { CompleteOrderHandler } from './commands/complete-order';
import { OperatorOrdersController, OrdersController } from './http/orders.controller';
import { OrderAggregate } from './order.aggregate';
import { OrdersProjection } from './read-model/orders.projection';
import { OrdersQueries } from './read-model/orders.queries';

/**
 * Commands and read model, no HTTP: what the CLI imports (replay and audit rebuild this read
 * model; `orders:complete` sends CompleteOrderCommand). Needs CqrsModule, the event store,
 * ProjectionsModule and ReferencesModule (global in both apps).
 */
@Module({
  providers: [
    // write side
    OrderAggregate.Handler,
    CompleteOrderHandler,
    // read side
    OrdersProjection,
    OrdersQueries,
  ],
  exports: [OrdersQueries],
})
export class OrdersCoreModule implements OnModuleInit {
  constructor(
    private readonly references: ReferenceChecker,
    private readonly queries: OrdersQueries,
  ) {}

  /** Other families (documents) check `order_id` through the ReferenceChecker, never through this module's tables. */
  onModuleInit(): void {
    this.references.register('order', (accountId, id) => this.queries.exists(accountId, id));
  }
}

/** The orders context in the service: the core plus the customer and operator HTTP APIs. Also needs ResourceApiModule. */
@Module({
  imports: [OrdersCoreModule],
  controllers: [OrdersController, OperatorOrdersController],
})
export class OrdersModule {}

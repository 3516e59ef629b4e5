import { type CommandContext, ReadYourWrites } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { DeliveriesQueries } from '../read-model/deliveries.queries';
import { DeliveryTargets } from '../read-model/delivery-target.queries';
import { DeliveryCommands } from './delivery-commands';

/**
 * A hand-made redelivery (the API's `redeliver`, the settings screen's Resend): the delivery of
 * the caller's account, sent again only if it could go out now (its endpoint enabled, the
 * account's notifications on: the dispatcher's own rule, on the same DeliveryTarget); otherwise
 * a 409 that says what to change.
 */
@Injectable()
export class RedeliveryService {
  constructor(
    private readonly deliveries: DeliveriesQueries,
    private readonly commands: DeliveryCommands,
    private readonly targets: DeliveryTargets,
    private readonly ryw: ReadYourWrites,
  ) {}

  async request(
    ctx: CommandContext,
    accountId: string,
    deliveryId: string,
  ): Promise<ReturnType<DeliveriesQueries['get']>> {
    const delivery = this.deliveries.get(ctx, deliveryId);
    const target = this.targets.of(accountId, delivery.endpoint_id);
    const result = await this.commands.execute(
      { kind: 'redeliver', deliveryId, accountId, now: new Date(), target },
      ctx,
    );
    await this.ryw.await(result.position);
    return this.deliveries.get(ctx, deliveryId);
  }
}

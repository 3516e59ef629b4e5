import { type CommandContext, cachedStatement as stmt, ProjectionRunner, ReadYourWrites } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { SettingsService } from '../settings/settings.service';
import { DeliveriesQueries } from './deliveries.queries';
import type { RedeliveryTarget } from './delivery';
import { DeliveryCommands } from './delivery-commands';

/**
 * A hand-made redelivery (the API's `redeliver`, the settings screen's Resend): the delivery of
 * the caller's account, sent again only if it could go out now (its endpoint enabled, the
 * account's notifications on); otherwise a 409 that says what to change.
 */
@Injectable()
export class RedeliveryService {
  constructor(
    private readonly deliveries: DeliveriesQueries,
    private readonly commands: DeliveryCommands,
    private readonly settings: SettingsService,
    private readonly runner: ProjectionRunner,
    private readonly ryw: ReadYourWrites,
  ) {}

  async request(ctx: CommandContext, accountId: string, deliveryId: string): Promise<ReturnType<DeliveriesQueries['get']>> {
    const delivery = this.deliveries.get(ctx, deliveryId);
    const result = await this.commands.execute(
      { kind: 'redeliver', deliveryId, accountId, now: new Date(), target: this.target(accountId, delivery.endpoint_id) },
      ctx,
    );
    await this.ryw.await(result.position);
    return this.deliveries.get(ctx, deliveryId);
  }

  private target(accountId: string, endpointId: string): RedeliveryTarget {
    const row = stmt(this.runner.db, 'SELECT enabled, deleted FROM webhook_endpoints WHERE id = ? AND account_id = ?').get(endpointId, accountId) as
      | { enabled: number; deleted: number }
      | undefined;
    const endpoint = !row || row.deleted ? 'deleted' : row.enabled ? 'enabled' : 'disabled';
    return { endpoint, notificationsEnabled: this.settings.get(accountId).notifications_enabled };
  }
}

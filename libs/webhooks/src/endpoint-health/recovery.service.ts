import type { StreamRevision } from '@filing/event-store';
import { type CommandContext, ConflictError, PreconditionFailedError } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { RedeliveryService } from '../deliveries/redelivery.service';
import { EndpointsService } from '../endpoints/endpoints.service';
import { EndpointHealthQueries } from './endpoint-health.queries';

/** Redeliveries in flight at once after the first. */
const CONCURRENCY = 8;

/**
 * `POST /webhook-endpoints/{id}/recover` and the settings screen's "Recover failed deliveries":
 * every `failed` delivery of the endpoint whose event happened at or after `since` goes through
 * the hand-made redelivery (RedeliveryService), so each is refused or accepted exactly as a
 * Resend would be: new attempts, the same webhook-id.
 */
@Injectable()
export class RecoveryService {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly health: EndpointHealthQueries,
    private readonly redelivery: RedeliveryService,
    private readonly commands: DeliveryCommands,
  ) {}

  async recover(
    ctx: CommandContext,
    endpointId: string,
    since: Date,
    ifMatch?: StreamRevision,
  ): Promise<{ deliveries: number }> {
    const endpoint = this.endpoints.get(ctx, endpointId);
    if (ifMatch !== undefined && BigInt(endpoint.version) !== ifMatch) throw new PreconditionFailedError();
    const ids = this.health.failedSince(endpoint.id, since);
    if (ids.length === 0) return { deliveries: 0 };
    // The first alone: a refusal for the endpoint or the account (disabled, switched off) is a
    // 409 that says what to change, before anything was written.
    let sent = await this.redeliver(ctx, ids[0]);
    let next = 1;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, ids.length - 1) }, async () => {
        while (next < ids.length) {
          const one = await this.redeliver(ctx, ids[next++]);
          sent += one;
        }
      }),
    );
    return { deliveries: sent };
  }

  /** 1 when sent again; 0 when it is no longer failed (someone resent it meanwhile). */
  private async redeliver(ctx: CommandContext, deliveryId: string): Promise<number> {
    try {
      await this.redelivery.request(ctx, ctx.account_id ?? '', deliveryId);
      return 1;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      const { state } = await this.commands.load(deliveryId);
      if (state.status === 'failed') throw err;
      return 0;
    }
  }
}

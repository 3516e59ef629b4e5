import { APP_CONFIG, type AppConfig } from '@filing/platform';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { systemResolver } from './address/dns-resolver';
import { DeliveryCommands } from './deliveries/delivery-commands';
import { RedeliveryService } from './deliveries/redelivery.service';
import { DispatchPipeline } from './dispatch/dispatch-pipeline';
import { DISPATCHER_LIMITS, DispatcherService } from './dispatch/dispatcher.service';
import { DeliveryStates } from './dispatch/delivery-states';
import { DueWindows } from './dispatch/due-windows';
import { claimLeaseMs, DispatcherInstance } from './dispatch/dispatcher-instance';
import { SenderThread, WEBHOOK_SENDER } from './dispatch/sender-thread';
import { EndpointsService, WEBHOOK_RESOLVER } from './endpoints/endpoints.service';
import { FanOutService } from './fanout/fanout.service';
import { AutoDisableJob } from './endpoint-health/auto-disable.job';
import { EndpointHealthQueries } from './endpoint-health/endpoint-health.queries';
import { RecoveryService } from './endpoint-health/recovery.service';
import { ReplayService } from './endpoint-health/replay.service';
import { NotificationHistory } from './events/notification-history';
import { EventsQueries } from './events/events.queries';
import { NotificationsProjection } from './events/notifications.projection';
import { EndpointHealthController } from './http/endpoint-health.controller';
import { EventsController } from './http/events.controller';
import { OperatorWebhooksController } from './http/operator-webhooks.controller';
import { WebhooksController } from './http/webhooks.controller';
import { DeliveryMetrics } from './metrics/delivery-metrics';
import { DeliveriesProjection } from './read-model/deliveries.projection';
import { DeliveriesQueries } from './read-model/deliveries.queries';
import { DeliveryQueue } from './read-model/delivery-queue.queries';
import { DeliverySignal } from './read-model/delivery-signal';
import { DeliveryTargets } from './read-model/delivery-target.queries';
import { EndpointsProjection } from './read-model/endpoints.projection';
import { EndpointsQueries } from './read-model/endpoints.queries';
import { SecretKeys } from './secrets/secret-keys';
import { SecretSealing } from './secrets/secret-sealing';
import { SettingsService } from './settings/settings.service';
import { SETTINGS_SCREEN_CONTROLLERS, SETTINGS_SCREEN_PROJECTIONS, SETTINGS_SCREEN_PROVIDERS } from './settings-screen';

/** The read models alone (endpoints, settings, deliveries, notifications, endpoint health, settings-screen sessions): what the CLI's replay and audit need; and the signing secrets' key streams. */
@Module({
  providers: [
    DeliverySignal,
    { provide: DeliveryStates, useFactory: () => new DeliveryStates() },
    { provide: DueWindows, useFactory: () => new DueWindows() },
    EndpointsProjection,
    DeliveriesProjection,
    NotificationsProjection,
    ...SETTINGS_SCREEN_PROJECTIONS,
    // The signing secrets' key streams (the CLI's secrets:reseal and accounts:erase too).
    SecretKeys,
  ],
  exports: [DeliverySignal, DeliveryStates, DueWindows, SecretKeys],
})
export class WebhooksCoreModule {}

/** Starts the fan-out, the dispatcher and the auto-disable job once the app is up; stops them before the store closes. */
@Injectable()
class WebhookWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    private readonly fanOut: FanOutService,
    private readonly dispatcher: DispatcherService,
    private readonly sender: SenderThread,
    private readonly sealing: SecretSealing,
    private readonly instance: DispatcherInstance,
    private readonly autoDisable: AutoDisableJob,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private resealing: Promise<void> | null = null;

  async onApplicationBootstrap(): Promise<void> {
    // The name this process's delivery claims carry: how an operator tells instances apart in the stream.
    new Logger('WebhookDispatcher').log(
      `Webhook dispatcher instance ${this.instance.id} (claims hold ${claimLeaseMs(this.config.webhookTimeoutMs)} ms)`,
    );
    this.fanOut.start();
    // Before the first attempt: an older version's secrets must be in the stream to sign with.
    await this.sealing.importLegacyFile();
    this.dispatcher.start();
    this.autoDisable.start();
    // In the background: it waits for the read models, and the previous key still opens meanwhile.
    this.resealing = this.sealing.resealUnderCurrentKey().catch((err: unknown) => {
      new Logger('WebhookSecrets').error(`Re-sealing signing secrets failed: ${(err as Error).message}`);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.sealing.stop();
    await this.resealing;
    await this.autoDisable.stop();
    // Its requests waiting on the sender thread go out too (at most 2.5 s late): leaving them
    // unsent would leave their claims standing until the lease ends, delaying them on another instance.
    await this.dispatcher.stop();
    await this.fanOut.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }
}

/**
 * Webhooks (DESIGN.md "Webhooks"): endpoints and the account switch, the catalog, the fan-out
 * subscription, the dispatcher and the delivery log. Needs the event store, the projections
 * module, APP_CONFIG and ScheduleModule.forRoot() (all global; the app module imports them).
 */
@Module({
  imports: [WebhooksCoreModule],
  controllers: [
    WebhooksController,
    EventsController,
    EndpointHealthController,
    OperatorWebhooksController,
    ...SETTINGS_SCREEN_CONTROLLERS,
  ],
  providers: [
    { provide: WEBHOOK_RESOLVER, useValue: systemResolver },
    {
      // Its thread resolves names with the system resolver (a function cannot cross to it).
      provide: SenderThread,
      useFactory: (config: AppConfig) =>
        new SenderThread({
          timeoutMs: config.webhookTimeoutMs,
          allowPrivateNetworks: config.webhookAllowPrivateNetworks,
          // Read here, so an unreadable file stops the start as before.
          extraCa: config.webhookCaFile ? readFileSync(config.webhookCaFile, 'utf8') : null,
          connectionsPerOrigin: DISPATCHER_LIMITS.perEndpoint,
          requestsPerEndpoint: DISPATCHER_LIMITS.perEndpoint,
        }),
      inject: [APP_CONFIG],
    },
    { provide: WEBHOOK_SENDER, useExisting: SenderThread },
    // Read models
    EndpointsQueries,
    DeliveriesQueries,
    DeliveryTargets,
    DeliveryQueue,
    // Commands
    EndpointsService,
    SettingsService,
    DeliveryCommands,
    RedeliveryService,
    // The Events API; endpoint stats, recovery and replay
    EventsQueries,
    NotificationHistory,
    EndpointHealthQueries,
    RecoveryService,
    ReplayService,
    // Workers
    FanOutService,
    DispatcherInstance,
    DispatchPipeline,
    DispatcherService,
    DeliveryMetrics,
    SecretSealing,
    AutoDisableJob,
    WebhookWorkers,
    ...SETTINGS_SCREEN_PROVIDERS,
  ],
})
export class WebhooksModule {}

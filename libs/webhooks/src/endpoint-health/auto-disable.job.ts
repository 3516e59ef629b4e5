import { APP_CONFIG, type AppConfig } from '@filing/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { EndpointsService } from '../endpoints/endpoints.service';
import { autoDisableCheckMs, type FailingStreak, failingTooLong } from './endpoint-health';
import { EndpointHealthQueries } from './endpoint-health.queries';

const JOB = 'webhooks.auto-disable';

/**
 * The failing report (issue 50: `webhook_endpoint.failing` after WEBHOOK_FAILING_AFTER) and
 * the auto-disable of CONTRACT.md §5, a `@nestjs/schedule` interval (its period follows
 * WEBHOOK_DISABLE_AFTER, so it is registered by hand): every enabled endpoint whose failed
 * attempts have spanned WEBHOOK_DISABLE_AFTER with no success is disabled with reason `failing`,
 * through the same system disable as a 410. The verdict comes from attempt events only; the
 * disable is an event, and with several instances the first to append it wins (the others decide
 * again on the stream and record nothing).
 */
@Injectable()
export class AutoDisableJob {
  private readonly logger = new Logger('WebhookAutoDisable');
  private running: Promise<void> | null = null;
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
    private readonly health: EndpointHealthQueries,
    private readonly endpoints: EndpointsService,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.scheduler.addInterval(
      JOB,
      setInterval(
        () => void this.check(),
        autoDisableCheckMs(Math.min(this.config.webhookDisableAfterMs, this.config.webhookFailingAfterMs)),
      ),
    );
  }

  async stop(): Promise<void> {
    this.started = false;
    // The schedule module may have cleared it first, on its own shutdown.
    if (this.scheduler.doesExist('interval', JOB)) this.scheduler.deleteInterval(JOB);
    await this.running;
  }

  /** One pass; a pass still under way when the next is due is not doubled. */
  check(): Promise<void> {
    if (!this.running) this.running = this.disableFailing().finally(() => (this.running = null));
    return this.running;
  }

  /** `webhook_endpoint.failing`: the event, once per streak (the endpoint's stream decides). */
  private async reportFailing(streak: FailingStreak): Promise<void> {
    try {
      const position = await this.endpoints.reportFailing(streak.accountId, streak.endpointId, streak);
      if (position) {
        this.logger.warn(
          `Webhook endpoint ${streak.endpointId} is failing: every attempt failed from ${streak.since} to ${streak.lastFailureAt}`,
        );
      }
    } catch (err) {
      this.logger.error(`Reporting webhook endpoint ${streak.endpointId} as failing failed: ${(err as Error).message}`);
    }
  }

  private async disableFailing(): Promise<void> {
    let streaks;
    try {
      streaks = this.health.failingStreaks();
    } catch (err) {
      // The read models may not exist yet at the very start: the next pass looks again.
      this.logger.debug?.(`Auto-disable check: ${(err as Error).message}`);
      return;
    }
    for (const streak of streaks) {
      // Reported before it is disabled: the warning's event precedes the disable in the stream.
      if (this.started && failingTooLong(streak, this.config.webhookFailingAfterMs)) await this.reportFailing(streak);
      if (!this.started || !failingTooLong(streak, this.config.webhookDisableAfterMs)) continue;
      try {
        const position = await this.endpoints.disableBySystem(streak.accountId, streak.endpointId, 'failing', streak);
        if (position) {
          this.logger.warn(
            `Webhook endpoint ${streak.endpointId} disabled (reason failing): every attempt failed from ${streak.since} to ${streak.lastFailureAt}`,
          );
        }
      } catch (err) {
        this.logger.error(`Auto-disabling webhook endpoint ${streak.endpointId} failed: ${(err as Error).message}`);
      }
    }
  }
}

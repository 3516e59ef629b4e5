import { Controller, Get, HttpCode, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { APP_CONFIG, type AppConfig, ProcessorRegistry } from '@filing/platform';

const STORE_PING_TIMEOUT_MS = 2_000;

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly processors: ProcessorRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Live: the process answers. Nothing else is checked, so a restart is never triggered by a dependency. */
  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready: this instance can serve — the event store answers, and every running stream processor
   * is started and within `READY_MAX_LAG` of the head. A processor halted on an event does not
   * make it unready (every instance halts on the same event: pulling them all out helps nobody);
   * it is listed under `degraded`, with the event it stopped on, as are parked events.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const degraded = this.degraded();
    try {
      const result = await this.health.check([
        () => this.checkStore(),
        () => this.checkProcessors('projections', (name) => name.startsWith('projection:')),
        () => this.checkProcessors('stream_processors', (name) => !name.startsWith('projection:')),
      ]);
      return degraded.length > 0 ? Object.assign({}, result, { degraded }) : result;
    } catch (err) {
      // Terminus throws its report inside a 503; answer with the report itself, not a problem document.
      if (err instanceof ServiceUnavailableException) {
        reply.status(503);
        const report = err.getResponse() as object;
        return degraded.length > 0 ? Object.assign({}, report, { degraded }) : report;
      }
      throw err;
    }
  }

  private async checkStore() {
    const check = this.indicator.check('event_store');
    try {
      await withTimeout(this.store.ping(), STORE_PING_TIMEOUT_MS);
      return check.up({ kind: this.store.kind });
    } catch (err) {
      return check.down({ kind: this.store.kind, message: (err as Error).message });
    }
  }

  /** Started, and not far behind: from positions the processors know and one head read. */
  private async checkProcessors(key: string, which: (name: string) => boolean) {
    const check = this.indicator.check(key);
    try {
      const head = await withTimeout(this.store.headPosition(), STORE_PING_TIMEOUT_MS);
      const lags = this.processors.lags(head).filter(([s]) => s.state !== 'halted' && which(s.name));
      // After a start, ready only once each has caught up with the head; from then on, within the bound.
      const starting = lags
        .filter(([s, lag]) => s.state === 'stopped' || (s.caughtUp === false && lag > 0))
        .map(([s]) => s.name);
      const bound = this.config.readyMaxLag;
      const lagging = lags.filter(([, lag]) => lag > bound).map(([s, lag]) => ({ processor: s.name, lag }));
      if (starting.length === 0 && lagging.length === 0) return check.up({ count: lags.length });
      return check.down({
        message:
          starting.length > 0
            ? `starting or catching up after the start: ${starting.join(', ')}`
            : `lagging more than ${bound} behind the head`,
        ...(lagging.length > 0 && { lagging }),
      });
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
  }

  /** Halted processors (each with the event it stopped on) and reactors with parked events. */
  private degraded(): object[] {
    return this.processors.statuses().flatMap((s): object[] => {
      if (s.state === 'halted' && s.halted) {
        const h = s.halted;
        return [
          {
            processor: s.name,
            state: 'halted',
            event_id: h.eventId,
            event_type: h.eventType,
            stream: h.streamId,
            position: h.position,
            error: h.error,
          },
        ];
      }
      return s.parked ? [{ processor: s.name, state: s.state, parked_events: s.parked }] : [];
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

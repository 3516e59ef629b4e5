import { Controller, Get, HttpCode, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ProcessorRegistry, ProjectionRunner } from '@filing/platform';

const STORE_PING_TIMEOUT_MS = 2_000;

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
    private readonly processors: ProcessorRegistry,
  ) {}

  /** Live: the process answers. Nothing else is checked, so a restart is never triggered by a dependency. */
  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready: the event store answers, no stream processor is halted (each halted one is named with
   * the event it stopped on), and every projection has caught up.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    try {
      return await this.health.check([
        () => this.checkStore(),
        () => this.checkProcessors(),
        () => this.checkProjections(),
      ]);
    } catch (err) {
      // Terminus throws its report inside a 503; answer with the report itself, not a problem document.
      if (err instanceof ServiceUnavailableException) {
        reply.status(503);
        return err.getResponse();
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

  private checkProcessors() {
    const check = this.indicator.check('stream_processors');
    const halted = this.processors.halted();
    if (halted.length === 0) return check.up({ count: this.processors.statuses().length });
    return check.down({
      message: `halted: ${halted.map((s) => s.name).join(', ')}`,
      halted: halted.map((s) => ({
        processor: s.name,
        event_id: s.halted?.eventId,
        event_type: s.halted?.eventType,
        stream: s.halted?.streamId,
        position: s.halted?.position,
        error: s.halted?.error,
      })),
    });
  }

  private async checkProjections() {
    const check = this.indicator.check('projections');
    try {
      return (await withTimeout(this.projections.isCaughtUp(), STORE_PING_TIMEOUT_MS))
        ? check.up()
        : check.down({ message: 'projections are catching up or stopped' });
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
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

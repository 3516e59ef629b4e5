import { EVENT_STORE, type EventStore, ObservedEventStore, type Position } from '@filing/event-store';
import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { positionLag, ProcessorRegistry } from '../processors/processor-registry';
import type { ProcessorState } from '../processors/stream-processor';
import { ProjectionRunner } from '../projections/projection-runner';

/**
 * The service's Prometheus registry. Contexts add their own metrics to `registry` (e.g. webhook
 * deliveries by outcome); the platform's own are HTTP latency, appended events and projection lag.
 */
@Injectable()
export class Metrics implements OnModuleInit {
  readonly registry = new Registry();
  private readonly startedAt = Date.now();
  /** When each projection was last seen caught up (at a scrape). */
  private readonly caughtUpAt = new Map<string, number>();

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  readonly eventsAppended = new Counter({
    name: 'events_appended_total',
    help: 'Events appended by this process, by stream category (the part of the stream name before the first dash)',
    labelNames: ['category'] as const,
    registers: [this.registry],
  });

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly processors: ProcessorRegistry,
  ) {
    collectDefaultMetrics({ register: this.registry });
    const projectionLag = new Gauge({
      name: 'projection_lag_seconds',
      help: 'How long a projection has been behind the head of the log, as seen at scrapes (0 when caught up)',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      collect: async () => {
        for (const [name, lag] of this.projectionLags(await this.store.headPosition())) {
          projectionLag.set({ projection: name }, lag);
        }
      },
    });
  }

  private registerProcessorMetrics(): void {
    const states: ProcessorState[] = ['running', 'restarting', 'halted', 'stopped', 'finished'];
    const processorState = new Gauge({
      name: 'stream_processor_state',
      help: 'State of each stream processor (projections, webhook fan-out): 1 on the current state',
      labelNames: ['processor', 'state'] as const,
      registers: [this.registry],
      collect: () => {
        processorState.reset();
        for (const s of this.processors.statuses()) {
          for (const state of states) processorState.set({ processor: s.name, state }, s.state === state ? 1 : 0);
        }
      },
    });
    const restarts = new Gauge({
      name: 'stream_processor_restarts',
      help: 'Restarts of each stream processor since the process started (after a failure)',
      labelNames: ['processor'] as const,
      registers: [this.registry],
      collect: () => {
        restarts.reset();
        for (const s of this.processors.statuses()) restarts.set({ processor: s.name }, s.restarts);
      },
    });
    const lag = new Gauge({
      name: 'stream_processor_lag_positions',
      help: "How far each stream processor's checkpoint is behind the head of the log, in log positions (events with sqlite, bytes with EventStoreDB)",
      labelNames: ['processor'] as const,
      registers: [this.registry],
      collect: async () => {
        lag.reset();
        const head = await this.store.headPosition();
        for (const [s, behind] of this.processors.lags(head)) lag.set({ processor: s.name }, behind);
      },
    });
    const parked = new Gauge({
      name: 'stream_processor_parked_events',
      help: 'Events a reactor (the webhook fan-out) parked and no retry has handled yet, as recorded in the store',
      labelNames: ['processor'] as const,
      registers: [this.registry],
      collect: () => {
        parked.reset();
        for (const s of this.processors.statuses()) {
          if (s.parked !== undefined) parked.set({ processor: s.name }, s.parked);
        }
      },
    });
  }

  onModuleInit(): void {
    this.registerProcessorMetrics();
    if (this.store instanceof ObservedEventStore) {
      this.store.onAppend((streamId, events) => {
        const dash = streamId.indexOf('-');
        this.eventsAppended.inc({ category: dash > 0 ? streamId.slice(0, dash) : streamId }, events.length);
      });
    }
  }

  /** From positions alone (one head read per scrape, no event read): since when each projection is behind. */
  private projectionLags(head: Position | null): Array<[string, number]> {
    const now = Date.now();
    return [...this.runner.projectionCheckpoints()].map(([name, checkpoint]) => {
      if (positionLag(checkpoint, head) === 0) {
        this.caughtUpAt.set(name, now);
        return [name, 0];
      }
      const since = this.caughtUpAt.get(name) ?? this.startedAt;
      return [name, Math.max(0, (now - since) / 1000)];
    });
  }
}

@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}

import { comparePositions, EVENT_STORE, type EventStore, ObservedEventStore } from '@filing/event-store';
import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ProcessorRegistry } from '../processors/processor-registry';
import type { ProcessorState } from '../processors/stream-processor';
import { ProjectionRunner } from '../projections/projection-runner';

/**
 * The service's Prometheus registry. Contexts add their own metrics to `registry` (e.g. webhook
 * deliveries by outcome); the platform's own are HTTP latency, appended events and projection lag.
 */
@Injectable()
export class Metrics implements OnModuleInit {
  readonly registry = new Registry();

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
      help: 'Age of the oldest event a projection has not applied yet (0 when caught up)',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      collect: async () => {
        for (const [name, lag] of await this.projectionLags()) projectionLag.set({ projection: name }, lag);
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
    const lagEvents = new Gauge({
      name: 'stream_processor_lag_events',
      help: "Events in $all after each stream processor's checkpoint (counted up to 10,000)",
      labelNames: ['processor'] as const,
      registers: [this.registry],
      collect: async () => {
        lagEvents.reset();
        for (const [s, lag] of await this.processors.lags(this.store)) lagEvents.set({ processor: s.name }, lag);
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

  private async projectionLags(): Promise<Array<[string, number]>> {
    const head = await this.store.headPosition();
    const lags: Array<[string, number]> = [];
    for (const [name, checkpoint] of this.runner.projectionCheckpoints()) {
      if (head === null || (checkpoint !== null && comparePositions(checkpoint, head) >= 0)) {
        lags.push([name, 0]);
        continue;
      }
      // readAll forwards is inclusive: the first event after the checkpoint is the second one read.
      const next = await this.store.readAll({ from: checkpoint ?? 'start', maxCount: 2 });
      const pending = next.find((e) => checkpoint === null || comparePositions(e.position, checkpoint) > 0);
      lags.push([name, pending ? Math.max(0, (Date.now() - pending.created.getTime()) / 1000) : 0]);
    }
    return lags;
  }
}

@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}

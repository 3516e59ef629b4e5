import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  type BeforeApplicationShutdown,
  type DynamicModule,
  Global,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { ReadYourWrites } from '../http/read-your-writes';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';

/**
 * Marks a provider class implementing `Projection`: the runner finds it wherever it is declared,
 * so a context module registers its read models without the app module listing them.
 */
export const RegisterProjection = DiscoveryService.createDecorator<void>();

export interface ProjectionsModuleOptions {
  /** `DATA_DIR/read.db`. */
  readonly file: string;
  /** Projections besides the discovered `@RegisterProjection()` providers. */
  readonly projections?: readonly Projection[];
  readonly maxBatch?: number;
}

/**
 * Runs the projections for the app's lifetime: discovered at init (all providers exist by then),
 * subscribed at bootstrap, stopped before the event store closes (its onApplicationShutdown).
 * Query services get `runner.db`; prepare statements lazily, since tables exist only after start.
 */
@Injectable()
class ProjectionRunnerLifecycle
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(
    private readonly runner: ProjectionRunner,
    private readonly discovery: DiscoveryService,
  ) {}

  onModuleInit(): void {
    const found = new Set<Projection>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: RegisterProjection.KEY })) {
      if (wrapper.instance) found.add(wrapper.instance as Projection);
    }
    for (const projection of found) this.runner.add(projection);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runner.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.close();
  }
}

@Global()
@Module({})
export class ProjectionsModule {
  static forRoot(options: ProjectionsModuleOptions): DynamicModule {
    return {
      module: ProjectionsModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        {
          provide: ProjectionRunner,
          useFactory: (store: EventStore) =>
            new ProjectionRunner({ store, file: options.file, projections: options.projections, maxBatch: options.maxBatch }),
          inject: [EVENT_STORE],
        },
        ProjectionRunnerLifecycle,
        ReadYourWrites,
      ],
      exports: [ProjectionRunner, ReadYourWrites],
    };
  }
}

import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  type BeforeApplicationShutdown,
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { HaltedReadModelHooks } from '../http/halted-read-models';
import { HeadBarrierHooks, ReadYourWrites } from '../http/read-your-writes';
import { ProcessorRegistry } from '../processors/processor-registry';
import type { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { activeReadModelFile, READ_MODEL_POINTER, removeDatabaseFiles, staleReadModelFiles } from './read-model-files';

/**
 * Marks a provider class implementing `Projection`: the runner finds it wherever it is declared,
 * so a context module registers its read models without the app module listing them.
 */
export const RegisterProjection = DiscoveryService.createDecorator<void>();

const PROJECTIONS_OPTIONS = Symbol('PROJECTIONS_OPTIONS');

export interface ProjectionsModuleOptions {
  /**
   * The data directory: the live read-model database is the one its pointer names
   * (`read-model-files.ts`), and a replay that publishes a new one is swapped in within a second.
   */
  readonly dataDir?: string;
  /** A fixed read database instead (tests). */
  readonly file?: string;
  /**
   * false in processes that must not apply projections (the CLI): two processes applying events
   * to one read database would apply them twice. Default true.
   */
  readonly run?: boolean;
  /** Projections besides the discovered `@RegisterProjection()` providers. */
  readonly projections?: readonly Projection[];
  readonly maxBatch?: number;
  /** See ProjectionRunnerOptions.headSkipsTypes. */
  readonly headSkipsTypes?: readonly string[];
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
  private readonly logger = new Logger(ProjectionRunner.name);
  private watching: string | null = null;
  private switching = Promise.resolve();

  constructor(
    private readonly runner: ProjectionRunner,
    private readonly discovery: DiscoveryService,
    private readonly registry: ProcessorRegistry,
    @Inject(PROJECTIONS_OPTIONS) private readonly options: ProjectionsModuleOptions,
  ) {}

  onModuleInit(): void {
    const found = new Set<Projection>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: RegisterProjection.KEY })) {
      if (wrapper.instance) found.add(wrapper.instance as Projection);
    }
    for (const projection of found) this.runner.add(projection);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.run === false) return;
    this.registry.register(this.runner);
    await this.runner.start();
    const { dataDir } = this.options;
    if (dataDir && !this.options.file) {
      for (const stale of staleReadModelFiles(dataDir)) removeDatabaseFiles(stale);
      this.watching = join(dataDir, READ_MODEL_POINTER);
      watchFile(this.watching, { interval: 500 }, () => {
        this.switching = this.switching.then(() => this.followPointer(dataDir));
      });
    }
  }

  /** A replay published a rebuilt database: swap it in, then drop the old one. */
  private async followPointer(dataDir: string): Promise<void> {
    const next = activeReadModelFile(dataDir);
    const previous = this.runner.db.name;
    if (next === previous) return;
    try {
      await this.runner.switchTo(next);
      removeDatabaseFiles(previous);
      this.logger.log(`Read models switched to ${next}`);
    } catch (err) {
      this.logger.error(`Switching read models to ${next} failed: ${(err as Error).message}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.watching) unwatchFile(this.watching);
    await this.switching;
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
        { provide: PROJECTIONS_OPTIONS, useValue: options },
        {
          provide: ProjectionRunner,
          useFactory: (store: EventStore) =>
            new ProjectionRunner({
              store,
              file: options.file ?? activeReadModelFile(requireDataDir(options)),
              projections: options.projections,
              maxBatch: options.maxBatch,
              headSkipsTypes: options.headSkipsTypes,
            }),
          inject: [EVENT_STORE],
        },
        ProjectionRunnerLifecycle,
        ReadYourWrites,
        // Before the head barrier: a request that needs a halted read model is answered at once.
        HaltedReadModelHooks,
        HeadBarrierHooks,
        ProcessorRegistry,
      ],
      exports: [ProjectionRunner, ReadYourWrites, ProcessorRegistry],
    };
  }
}

function requireDataDir(options: ProjectionsModuleOptions): string {
  if (!options.dataDir) throw new Error('ProjectionsModule needs dataDir or file');
  return options.dataDir;
}

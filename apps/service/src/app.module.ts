import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { ScheduleModule } from '@nestjs/schedule';
import { join } from 'node:path';
import { AuthModule } from '@filing/auth';
import { DOCUMENT_CONTENT_CHUNK, DocumentsModule } from '@filing/documents';
import { EntitiesModule } from '@filing/entities';
import { EventStoreModule } from '@filing/event-store';
import { JurisdictionsModule } from '@filing/jurisdictions';
import { OrdersModule } from '@filing/orders';
import { TasksModule } from '@filing/tasks';
import { WebhooksModule } from '@filing/webhooks';
import {
  APP_CONFIG,
  type AppConfig,
  MetricsModule,
  ProblemDetailsFilter,
  ProjectionsModule,
  ResourceApiModule,
} from '@filing/platform';
import { HealthModule } from './health/health.module';
import { MetricsController } from './metrics/metrics.controller';

/** Composes the context modules into the one deployable service. */
@Module({})
export class AppModule {
  /** `extraImports`: modules added by tests and benchmarks (e.g. probe routes). */
  static forRoot(config: AppConfig, extraImports: NonNullable<ModuleMetadata['imports']> = []): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        CqrsModule.forRoot(),
        // Periodic work (the dispatcher's tick, the webhook auto-disable) as @nestjs/schedule jobs.
        ScheduleModule.forRoot(),
        EventStoreModule.forRoot(config.eventStore),
        // Content chunks (up to ~0.5 MB each) are read by no projection: the per-request head
        // read passes over them rather than carry one on every request during an upload.
        ProjectionsModule.forRoot({ dataDir: config.dataDir, headSkipsTypes: [DOCUMENT_CONTENT_CHUNK] }),
        ResourceApiModule.forRoot({ secretsKey: config.secretsKey, cursorKeyFile: join(config.dataDir, 'cursor.key') }),
        MetricsModule,
        HealthModule,
        AuthModule,
        EntitiesModule,
        JurisdictionsModule,
        TasksModule,
        OrdersModule,
        DocumentsModule,
        WebhooksModule,
        ...extraImports,
      ],
      controllers: [MetricsController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
      exports: [APP_CONFIG],
    };
  }
}

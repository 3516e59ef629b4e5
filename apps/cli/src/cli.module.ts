import { type DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AuthCoreModule } from '@filing/auth';
import { DocumentsCoreModule } from '@filing/documents';
import { EntitiesCoreModule } from '@filing/entities';
import { EventStoreModule } from '@filing/event-store';
import { JurisdictionsCoreModule } from '@filing/jurisdictions';
import { OrdersCoreModule } from '@filing/orders';
import {
  APP_CONFIG,
  type AppConfig,
  ProjectionsModule,
  ReferencesModule,
  SecretBox,
  ServiceKeys,
} from '@filing/platform';
import { join } from 'node:path';
import { TasksCoreModule } from '@filing/tasks';
import { WebhooksCoreModule } from '@filing/webhooks';

/** The same context modules as the service, without an HTTP listener or background workers. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      // Global, like AppModule: context modules inject APP_CONFIG without importing this one.
      global: true,
      imports: [
        EventStoreModule.forRoot(config.eventStore),
        // Projections are registered (replay and audit need them) but never run here: the service runs them.
        ProjectionsModule.forRoot({ dataDir: config.dataDir, run: false }),
        ReferencesModule,
        EntitiesCoreModule,
        JurisdictionsCoreModule,
        TasksCoreModule,
        OrdersCoreModule,
        DocumentsCoreModule,
        CqrsModule.forRoot(),
        // Commands and projections, no HTTP: the commands never wait on the projection runner.
        AuthCoreModule,
        // Webhook read models only: the fan-out and the dispatcher run in the service alone.
        WebhooksCoreModule,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        // The service's SecretBox (ResourceApiModule there): documents' data keys and webhook
        // secrets are sealed with it. Made on first use, so that a command that opens no secret
        // never creates DATA_DIR/cursor.key (as another user than the service's, it might).
        { provide: SecretBox, useFactory: () => lazySecretBox(config) },
      ],
      exports: [APP_CONFIG, SecretBox],
    };
  }
}

/** A SecretBox whose keys are loaded (or the key file made) when it is first used. */
function lazySecretBox(config: AppConfig): SecretBox {
  let box: SecretBox | undefined;
  const real = () =>
    (box ??= (config.secretsKey ?? ServiceKeys.fromKeyFile(join(config.dataDir, 'cursor.key'))).secretBox());
  const lazy: Pick<SecretBox, 'keyId' | 'seal' | 'open' | 'isCurrent' | 'toJSON'> = {
    get keyId() {
      return real().keyId;
    },
    seal: (plaintext, context) => real().seal(plaintext, context),
    open: (sealed, context) => real().open(sealed, context),
    isCurrent: (sealed) => real().isCurrent(sealed),
    toJSON: () => ({}),
  };
  // Its methods are SecretBox's, its keys in the real one's private fields.
  return lazy as SecretBox;
}

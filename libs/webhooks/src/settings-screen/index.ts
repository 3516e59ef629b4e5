import { FailedAuthThrottle } from '@filing/auth';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ProjectionRunner, ReadYourWrites, ServiceKeys } from '@filing/platform';
import type { Provider } from '@nestjs/common';
import { SettingsSessionGuard } from './session/session.guard';
import { SettingsSessionStore } from './session/session-store';
import { SettingsSessionsProjection } from './session/sessions.projection';
import { SIGN_IN_CSRF_KEY_PURPOSE, SignInCsrf } from './session/sign-in-csrf';
import { SIGN_IN_LIMITS, SIGN_IN_THROTTLE, SignInController } from './sign-in.controller';
import { ApiClientsController } from './api-clients.controller';
import { EndpointRecoveryController, EventTimelineController } from './endpoint-recovery.controller';
import { WebhookEndpointSettingsController } from './webhook-endpoint-settings.controller';
import { WebhookSettingsController } from './webhook-settings.controller';

export { SettingsSessionStore } from './session/session-store';
export { SIGN_IN_THROTTLE } from './sign-in.controller';

/** The settings screen's read model (its sessions): with the other webhooks read models, so the CLI's replay and audit have it too. */
export const SETTINGS_SCREEN_PROJECTIONS = [SettingsSessionsProjection];

/** The settings screen's parts, added to WebhooksModule (its pages use the module's own services). */
export const SETTINGS_SCREEN_CONTROLLERS = [
  SignInController,
  WebhookSettingsController,
  WebhookEndpointSettingsController,
  EndpointRecoveryController,
  ApiClientsController,
  EventTimelineController,
];

export const SETTINGS_SCREEN_PROVIDERS: Provider[] = [
  {
    provide: SettingsSessionStore,
    useFactory: (store: EventStore, runner: ProjectionRunner, ryw: ReadYourWrites) =>
      new SettingsSessionStore(store, runner, ryw),
    inject: [EVENT_STORE, ProjectionRunner, ReadYourWrites],
  },
  { provide: SIGN_IN_THROTTLE, useFactory: () => new FailedAuthThrottle(SIGN_IN_LIMITS) },
  {
    provide: SignInCsrf,
    useFactory: (keys: ServiceKeys) => {
      const [current, ...accepted] = keys.deriveAccepted(SIGN_IN_CSRF_KEY_PURPOSE);
      return new SignInCsrf(current, accepted);
    },
    inject: [ServiceKeys],
  },
  SettingsSessionGuard,
];

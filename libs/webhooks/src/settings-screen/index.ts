import { FailedAuthThrottle } from '@filing/auth';
import { APP_CONFIG, type AppConfig, ServiceKeys } from '@filing/platform';
import { Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { join } from 'node:path';
import { SettingsSessionGuard } from './session/session.guard';
import { SettingsSessionStore } from './session/session-store';
import { SIGN_IN_CSRF_KEY_PURPOSE, SignInCsrf } from './session/sign-in-csrf';
import { SIGN_IN_LIMITS, SIGN_IN_THROTTLE, SignInController } from './sign-in.controller';
import { EndpointRecoveryController } from './endpoint-recovery.controller';
import { WebhookSettingsController } from './webhook-settings.controller';

export { SettingsSessionStore } from './session/session-store';
export { SIGN_IN_THROTTLE } from './sign-in.controller';

@Injectable()
class SessionStoreCloser implements OnApplicationShutdown {
  constructor(private readonly sessions: SettingsSessionStore) {}
  onApplicationShutdown(): void {
    this.sessions.close();
  }
}

/** The settings screen's parts, added to WebhooksModule (its pages use the module's own services). */
export const SETTINGS_SCREEN_CONTROLLERS = [SignInController, WebhookSettingsController, EndpointRecoveryController];

export const SETTINGS_SCREEN_PROVIDERS: Provider[] = [
  {
    provide: SettingsSessionStore,
    useFactory: (config: AppConfig) => new SettingsSessionStore(join(config.dataDir, 'settings-sessions.db')),
    inject: [APP_CONFIG],
  },
  { provide: SIGN_IN_THROTTLE, useFactory: () => new FailedAuthThrottle(SIGN_IN_LIMITS) },
  { provide: SignInCsrf, useFactory: (keys: ServiceKeys) => new SignInCsrf(keys.derive(SIGN_IN_CSRF_KEY_PURPOSE)), inject: [ServiceKeys] },
  SettingsSessionGuard,
  SessionStoreCloser,
];

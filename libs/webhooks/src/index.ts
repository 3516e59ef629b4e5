/** What other modules and the apps may import from webhooks. */
export { WebhooksModule, WebhooksCoreModule } from './webhooks.module';
export { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookEventTypeName } from './catalog/event-types';
export { verifySignature } from './signing/signature';
export { notificationComponents, ANY_NOTIFICATION } from './notifications/openapi-notifications';
export { publishedEventTypes, type PublishedEventType } from './notifications/notification-mapper';
export { DISPATCHER_LIMITS } from './dispatch/dispatcher.service';
export { WEBHOOK_RESOLVER } from './endpoints/endpoints.service';
export type { Resolver, ResolvedAddress } from './address/address-guard';
export type * from './endpoints/endpoint.events';
export type * from './deliveries/delivery.events';
export { SettingsSessionStore, SIGN_IN_THROTTLE } from './settings-screen';
export { SecretKeys } from './secrets/secret-keys';

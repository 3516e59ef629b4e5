export { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookEventTypeName } from './catalog/event-types';
export { verifySignature } from './signing/signature';

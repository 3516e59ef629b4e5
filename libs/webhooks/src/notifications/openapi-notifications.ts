import { extend } from '@filing/platform';
import { NOTIFICATION_BY_TYPE, publishedEventTypes } from './notification-mapper';
import { type JsonSchema, toOpenApi30 } from './payload-schemas';

/** `order.submitted` → `OrderSubmittedNotification`, `webhook_endpoint.disabled` → `WebhookEndpointDisabledNotification`. */
export function notificationComponentName(eventType: string): string {
  const words = eventType.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `${words.join('')}Notification`;
}

/** The component every notification is one of, told apart by `event_type`. */
export const ANY_NOTIFICATION = 'WebhookNotification';

/**
 * The OpenAPI (3.0) components of the notification payloads, from the notification table's
 * schemas: one per type, and `WebhookNotification`, one of them by `event_type`.
 */
export function notificationComponents(): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  const mapping: Record<string, string> = {};
  for (const t of publishedEventTypes()) {
    const name = notificationComponentName(t.name);
    const entry = NOTIFICATION_BY_TYPE.get(t.name)!;
    components[name] = extend(toOpenApi30(entry.schema), { 'x-schema-version': t.schema_version });
    mapping[t.name] = `#/components/schemas/${name}`;
  }
  components[ANY_NOTIFICATION] = {
    description:
      'A webhook body (and an Events API item less `occurred_at`): one of the notification payloads, by `event_type`. GET /webhook-event-types publishes the same schemas as JSON Schema 2020-12',
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'event_type', mapping },
  };
  return components;
}

/**
 * The published payload contract (CONTRACT.md §4, issue 50): one JSON Schema 2020-12 per
 * notification type, exactly the body the mapper writes (`additionalProperties: false`, every
 * field required). The notification table (notification-mapper.ts) holds one beside each
 * mapping; `GET /webhook-event-types`, the OpenAPI document and the SDK's drift test read them.
 */
export interface JsonSchema {
  readonly [keyword: string]: unknown;
}

/**
 * Bumped when a payload's fields change meaning or a field goes; adding a field is additive and
 * keeps it (receivers must ignore fields they do not know). 1: the first published schemas.
 */
export const SCHEMA_VERSION = 1;

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });
const nullableUuid = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'uuid', description });
const oneOf = (values: readonly string[], description: string): JsonSchema => ({
  type: 'string',
  enum: [...values],
  description,
});
const time = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });

export const ENTITY_STATUSES = ['active', 'inactive', 'dissolved'] as const;
export const JURISDICTION_STATUSES = ['pending', 'active', 'inactive'] as const;
export const TASK_STATUSES = ['open', 'completed'] as const;

/** The schema of `eventType`'s payload: the four common fields, then the type's own, all required. */
export function payloadSchema(
  eventType: string,
  description: string,
  fields: Readonly<Record<string, JsonSchema>>,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    event_id: uuid('Unique per domain event; the same on every retry, every endpoint and a replay (= webhook-id)'),
    event_type: { type: 'string', const: eventType },
    timestamp: time('When the domain event happened (not when it was delivered)'),
    ...fields,
    resource_version: {
      type: 'integer',
      minimum: 0,
      description:
        'The `version` of the resource the notification is about right after this event (what GET answers then): keep the highest seen per resource and ignore notifications with a lower one',
    },
  };
  return {
    $schema: DIALECT,
    title: eventType,
    description,
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

export const FIELDS = {
  entity: { entity_id: uuid('The entity'), status: oneOf(ENTITY_STATUSES, "The entity's status after the event") },
  jurisdiction: {
    jurisdiction_id: uuid('The jurisdiction registration'),
    entity_id: uuid('The entity it belongs to'),
    status: oneOf(JURISDICTION_STATUSES, "The registration's status after the event"),
  },
  document: (status: 'available' | 'deleted') => ({
    document_id: uuid('The document'),
    entity_id: uuid('The entity it belongs to'),
    order_id: nullableUuid('The order it belongs to; null when none'),
    status: oneOf([status], status === 'deleted' ? 'Deleted' : 'Its content can be downloaded'),
  }),
  task: {
    task_id: uuid('The task'),
    entity_id: uuid('The entity it belongs to'),
    status: oneOf(TASK_STATUSES, "The task's status after the event"),
  },
  order: (status: 'submitted' | 'cancelled' | 'completed') => ({
    order_id: uuid('The order'),
    entity_id: uuid('The entity it is for'),
    status: oneOf([status], "The order's status after the event"),
  }),
  endpointDisabled: {
    endpoint_id: uuid('The endpoint the service disabled'),
    reason: oneOf(
      ['gone', 'failing'],
      'Why: the receiver answered 410 Gone, or every attempt failed for WEBHOOK_DISABLE_AFTER',
    ),
    status: oneOf(['disabled'], 'The endpoint is disabled'),
  },
  endpointFailing: {
    endpoint_id: uuid('The endpoint whose attempts have all failed for WEBHOOK_FAILING_AFTER'),
    failing_since: time('Its first failed attempt after its last success (or its last enable)'),
  },
  deliveryFailed: {
    delivery_id: uuid('The delivery that gave up'),
    endpoint_id: uuid('The endpoint it was for'),
    failed_event_id: uuid('The event_id of the notification it carried'),
    failed_event_type: { type: 'string', description: 'The event_type of the notification it carried' },
  },
} as const;

/**
 * The same schema in OpenAPI 3.0's dialect (the document the service publishes is 3.0):
 * `const` as a one-value `enum`, a `[type, 'null']` as `nullable`, no `$schema`.
 */
export function toOpenApi30(schema: JsonSchema): JsonSchema {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema') continue;
    if (key === 'const') out.enum = [value];
    else if (key === 'type' && Array.isArray(value)) {
      out.type = value.find((t) => t !== 'null');
      if (value.includes('null')) out.nullable = true;
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, p]) => [name, toOpenApi30(p)]),
      );
    } else out[key] = value;
  }
  return out;
}

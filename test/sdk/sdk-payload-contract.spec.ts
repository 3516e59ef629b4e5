/**
 * The SDK's payload types cannot drift from the published contract (issue 50): the SDK imports
 * no other lib, so it mirrors the payloads (its interfaces, and `WEBHOOK_PAYLOAD_FIELDS`, which
 * the compiler ties to them); this compares the mirror with the notification table's schemas,
 * the very ones `GET /webhook-event-types` publishes.
 */
import { OPERATIONAL_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPE_NAMES, WEBHOOK_PAYLOAD_FIELDS } from '@filing/client';
import { publishedEventTypes } from '@filing/webhooks';

const sorted = (list: readonly string[]) => [...list].sort();

describe("the SDK's payload types and the published schemas", () => {
  const published = publishedEventTypes();

  it('name the same types, in the same order, and the same operational ones', () => {
    expect(WEBHOOK_EVENT_TYPE_NAMES).toEqual(published.map((t) => t.name));
    expect(sorted(OPERATIONAL_EVENT_TYPE_NAMES)).toEqual(
      sorted(published.filter((t) => t.category === 'Webhooks').map((t) => t.name)),
    );
  });

  it('give every payload exactly the fields of its schema, all of them required', () => {
    for (const t of published) {
      const schema = t.schema as { properties: Record<string, unknown>; required: string[] };
      expect([t.name, sorted(WEBHOOK_PAYLOAD_FIELDS[t.name as keyof typeof WEBHOOK_PAYLOAD_FIELDS])]).toEqual([
        t.name,
        sorted(Object.keys(schema.properties)),
      ]);
      expect([t.name, sorted(schema.required)]).toEqual([t.name, sorted(Object.keys(schema.properties))]);
    }
  });
});

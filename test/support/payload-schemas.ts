/** The payload schemas `GET /webhook-event-types` publishes, compiled by a real JSON Schema validator (ajv, 2020-12). */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Api } from './webhooks';

export async function publishedValidators(api: Api): Promise<Map<string, ValidateFunction>> {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const catalog = await api('GET', '/external-api/v1/webhook-event-types');
  if (catalog.status !== 200) throw new Error(`GET /webhook-event-types answered ${catalog.status}`);
  return new Map(
    (catalog.body.data as Array<{ name: string; schema: object }>).map((t) => [t.name, ajv.compile(t.schema)]),
  );
}

/** A payload checked against its type's published schema: the errors, if any, are in the failure. */
export function expectValid(validators: Map<string, ValidateFunction>, payload: Record<string, unknown>): void {
  const validate = validators.get(String(payload.event_type));
  expect({ type: payload.event_type, known: validate !== undefined }).toEqual({
    type: payload.event_type,
    known: true,
  });
  expect({ payload, valid: validate!(payload), errors: validate!.errors ?? null }).toEqual({
    payload,
    valid: true,
    errors: null,
  });
}

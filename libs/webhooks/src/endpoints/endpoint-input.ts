import { type FieldError, ValidationError } from '@filing/platform';
import { checkUrlSyntax, hostOf, NOT_PUBLIC, resolveAllowed, type Resolver } from '../address/address-guard';
import { isWebhookEventType } from '../catalog/event-types';

/** URL (https, public address after DNS) and event types; every problem in one 400. */
export async function validateEndpointInput(
  url: string | undefined,
  eventTypes: readonly string[],
  resolver: Resolver,
  allowPrivate: boolean,
): Promise<void> {
  const errors: FieldError[] = [];
  if (url !== undefined) {
    const checked = checkUrlSyntax(url, allowPrivate);
    if ('problem' in checked) errors.push({ field: 'url', message: checked.problem.message });
    else {
      try {
        await resolveAllowed(hostOf(checked.url), resolver, allowPrivate);
      } catch (err) {
        const refused = (err as { code?: string }).code === 'ADDRESS_REFUSED';
        errors.push({ field: 'url', message: refused ? NOT_PUBLIC : 'The URL host could not be resolved' });
      }
    }
  }
  const unknown = eventTypes.filter((t) => !isWebhookEventType(t));
  if (unknown.length > 0) {
    errors.push({
      field: 'event_types',
      message: `Unknown event types: ${unknown.join(', ')} (see GET /webhook-event-types)`,
    });
  }
  if (errors.length > 0) throw new ValidationError(errors);
}

import { WEBHOOK_EVENT_TYPES } from '../../catalog/event-types';
import { type Html, html } from './html';

export interface EndpointFormValues {
  readonly url: string;
  readonly description: string;
  readonly event_types: readonly string[];
  /** As typed; empty: no limit. */
  readonly rate_limit_per_second: string;
}

/** Field name → message, shown next to the field. */
export type FieldErrors = Readonly<Record<string, string>>;

export const EMPTY_ENDPOINT_FORM: EndpointFormValues = {
  url: '',
  description: '',
  event_types: [],
  rate_limit_per_second: '',
};

/** The catalog grouped by category, in the catalog's order. */
export function eventTypeGroups(): Array<{ category: string; types: Array<{ name: string; label: string }> }> {
  const groups: Array<{ category: string; types: Array<{ name: string; label: string }> }> = [];
  for (const t of WEBHOOK_EVENT_TYPES) {
    let group = groups.find((g) => g.category === t.category);
    if (!group) groups.push((group = { category: t.category, types: [] }));
    group.types.push({ name: t.name, label: t.label });
  }
  return groups;
}

export function eventTypeLabel(name: string): string {
  return WEBHOOK_EVENT_TYPES.find((t) => t.name === name)?.label ?? name;
}

const FIELD_IDS: Record<string, string> = {
  url: 'url',
  description: 'description',
  event_types: 'event-types',
  rate_limit_per_second: 'rate-limit',
  /** Not a field: the endpoints list (a create beyond the account's cap). */
  endpoints: 'endpoints-heading',
};

/** "There is a problem" box linking to each bad field; focusable so the page can point at it. */
export function errorSummary(errors: FieldErrors): Html | null {
  const entries = Object.entries(errors);
  if (entries.length === 0) return null;
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
  <h3 id="error-summary-title">There is a problem — nothing was saved</h3>
  <ul>${entries.map(([field, message]) => html`<li><a href="#${FIELD_IDS[field] ?? field}">${message}</a></li>`)}</ul>
</div>`;
}

function fieldError(id: string, message: string | undefined): Html | null {
  return message
    ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${message}</p>`
    : null;
}

function describedBy(id: string, hint: boolean, error: string | undefined): Html | null {
  const ids = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : null;
}

/** Endpoint URL, Description, Rate limit, Event Types (checkboxes grouped by category; none = all events). */
export function endpointFields(values: EndpointFormValues, errors: FieldErrors): Html {
  const selected = new Set(values.event_types);
  return html`<div class="field">
  <label for="url">Endpoint URL <span aria-hidden="true">*</span><span class="visually-hidden">(required)</span></label>
  <p class="hint" id="url-hint">An https:// address that receives a POST for each event.</p>
  <input type="url" id="url" name="url" required maxlength="2048" inputmode="url" autocomplete="off"
    placeholder="https://example.com/webhooks" value="${values.url}"${errors.url ? html` aria-invalid="true"` : null}${describedBy('url', true, errors.url)}>
  ${fieldError('url', errors.url)}
</div>
<div class="field">
  <label for="description">Description</label>
  <input type="text" id="description" name="description" maxlength="500" value="${values.description}"${
    errors.description ? html` aria-invalid="true"` : null
  }${describedBy('description', false, errors.description)}>
  ${fieldError('description', errors.description)}
</div>
<div class="field">
  <label for="rate-limit">Rate limit (requests per second)</label>
  <p class="hint" id="rate-limit-hint">1 to 1,000; leave empty for no limit. Events beyond it wait their turn, none is dropped.</p>
  <input type="number" id="rate-limit" name="rate_limit_per_second" min="1" max="1000" step="1" inputmode="numeric" value="${values.rate_limit_per_second}"${
    errors.rate_limit_per_second ? html` aria-invalid="true"` : null
  }${describedBy('rate-limit', true, errors.rate_limit_per_second)}>
  ${fieldError('rate-limit', errors.rate_limit_per_second)}
</div>
<fieldset id="event-types"${describedBy('event-types', true, errors.event_types)}>
  <legend>Event Types</legend>
  <p class="hint" id="event-types-hint">Leave every box unchecked to receive all events. Endpoint Disabled (another endpoint of yours was disabled by the service) is sent only when checked.</p>
  ${fieldError('event-types', errors.event_types)}
  <div class="checkbox-groups">
  ${eventTypeGroups().map(
    (group) => html`<fieldset>
    <legend>${group.category}</legend>
    ${group.types.map(
      (t) =>
        html`<label class="checkbox"><input type="checkbox" name="event_types" value="${t.name}" id="event-type-${t.name.replace('.', '-')}"${
          selected.has(t.name) ? html` checked` : null
        }> ${t.label}</label>`,
    )}
  </fieldset>`,
  )}
  </div>
</fieldset>`;
}

import type { EndpointHealth } from '../../endpoint-health/endpoint-health.queries';
import type { EndpointDetails, EndpointView } from '../../endpoints/endpoint-views';
import type { DisabledReason } from '../../endpoints/endpoint.events';
import {
  endpointFields,
  type EndpointFormValues,
  errorSummary,
  eventTypeLabel,
  type FieldErrors,
} from './endpoint-form';
import { healthFacts, when } from './endpoint-health.view';
import { type Html, html } from './html';
import { csrfField, layout, PROFILE_URL } from './layout';

export const WEBHOOKS_URL = '/settings/profile/webhook-endpoints';

export interface ProfilePageModel {
  readonly user: { readonly email: string; readonly accountId: string; readonly csrfToken: string };
  readonly flash?: string | null;
  readonly notificationsEnabled: boolean;
  readonly endpoints: readonly EndpointDetails[];
  /** Each listed endpoint's deliveries: the newest, the 24 h success rate, failing since. */
  readonly health: ReadonlyMap<string, EndpointHealth>;
  /** Cursor of the next page of endpoints, when there are more. */
  readonly nextCursor: string | null;
  readonly createForm: { readonly values: EndpointFormValues; readonly errors: FieldErrors };
}

export function endpointUrl(id: string, action = ''): string {
  return `${WEBHOOKS_URL}/${id}${action ? `/${action}` : ''}`;
}

export function eventTypesSummary(eventTypes: readonly string[]): Html {
  if (eventTypes.length === 0) return html`All events`;
  return html`<ul class="inline-list">${eventTypes.map((t) => html`<li>${eventTypeLabel(t)} <span class="hint">(${t})</span></li>`)}</ul>`;
}

export function statusBadge(enabled: boolean): Html {
  return enabled
    ? html`<span class="badge enabled">Enabled</span>`
    : html`<span class="badge disabled">Disabled</span>`;
}

const DISABLED_BECAUSE: Record<DisabledReason, string> = {
  manual: 'Disabled by a user',
  gone: 'Disabled automatically: the receiver answered 410 Gone',
  failing: 'Disabled automatically: every delivery attempt failed',
};

/** Why and since when a disabled endpoint is disabled (nothing while enabled). */
export function disabledNote(e: EndpointDetails): Html | null {
  if (e.enabled || !e.disabled_reason) return null;
  // Created disabled and never enabled: not something a user did.
  const reason =
    e.disabled_reason === 'manual' && e.disabled_at === e.created_at
      ? 'Not enabled yet'
      : DISABLED_BECAUSE[e.disabled_reason];
  return html`<p class="disabled-reason" id="endpoint-${e.id}-disabled">${reason}, since ${when(e.disabled_at)}. Its pending deliveries were cancelled; enable it to receive events again.</p>`;
}

export function rateLimitSummary(limit: number | null): Html {
  return limit === null ? html`<span class="hint">No limit</span>` : html`${limit} per second`;
}

/** Enable or Disable (whichever applies), as a one-button form. */
export function toggleForm(endpoint: EndpointView, csrfToken: string, backTo: string): Html {
  const action = endpoint.enabled ? 'disable' : 'enable';
  const label = endpoint.enabled ? 'Disable' : 'Enable';
  return html`<form method="post" action="${endpointUrl(endpoint.id, action)}">
  ${csrfField(csrfToken)}<input type="hidden" name="back" value="${backTo}">
  <button type="submit" class="secondary">${label}<span class="visually-hidden"> ${endpoint.url}</span></button>
</form>`;
}

function endpointItem(e: EndpointDetails, csrfToken: string, health: EndpointHealth | undefined): Html {
  const headingId = `endpoint-${e.id}-url`;
  return html`<li id="endpoint-${e.id}" aria-labelledby="${headingId}">
  <div class="endpoint-head">
    <h4 class="endpoint-url" id="${headingId}">${e.url}</h4>
    ${statusBadge(e.enabled)}
  </div>
  ${disabledNote(e)}
  <dl class="facts">
    <dt>Description</dt><dd>${e.description || html`<span class="hint">None</span>`}</dd>
    <dt>Event types</dt><dd>${eventTypesSummary(e.event_types)}</dd>
    <dt>Rate limit</dt><dd>${rateLimitSummary(e.rate_limit_per_second)}</dd>
    ${healthFacts(health)}
  </dl>
  <div class="actions">
    ${toggleForm(e, csrfToken, 'profile')}
    <a class="button secondary" href="${endpointUrl(e.id)}#edit">Edit<span class="visually-hidden"> ${e.url}</span></a>
    <a class="button secondary" href="${endpointUrl(e.id)}#signing-secret">Signing secret &amp; deliveries<span class="visually-hidden"> of ${e.url}</span></a>
    <a class="button danger" href="${endpointUrl(e.id, 'delete')}">Delete<span class="visually-hidden"> ${e.url}</span></a>
  </div>
</li>`;
}

/** Profile Settings → Profile tab: the user's profile and the Webhook Settings section. */
export function profilePage(model: ProfilePageModel): string {
  const { user } = model;
  return layout({
    title: 'Profile Settings',
    user,
    flash: model.flash,
    body: html`<h1>Profile Settings</h1>
<nav class="tabs" aria-label="Profile Settings">
  <a href="${PROFILE_URL}" aria-current="page">Profile</a>
  <a href="${PROFILE_URL}/api-clients">API clients</a>
</nav>

<section class="panel" aria-labelledby="profile-heading">
  <h2 id="profile-heading">Profile</h2>
  <dl class="facts">
    <dt>Email</dt><dd>${user.email}</dd>
    <dt>Account</dt><dd><code>${user.accountId}</code></dd>
  </dl>
</section>

<section class="panel" id="webhook-settings" aria-labelledby="webhook-settings-heading">
  <h2 id="webhook-settings-heading">Webhook Settings</h2>

  ${notificationsSwitch(model.notificationsEnabled, user.csrfToken)}

  ${endpointList(model)}

  ${createEndpointForm(model.createForm, user.csrfToken)}
</section>`,
  });
}

/** Webhook Notifications on or off for the whole account: a switch, as a one-button form. */
function notificationsSwitch(on: boolean, csrfToken: string): Html {
  return html`<div class="switch-row">
    <span id="notifications-label"><strong>Webhook Notifications</strong></span>
    <form method="post" action="/settings/profile/webhook-notifications">
      ${csrfField(csrfToken)}
      <input type="hidden" name="notifications_enabled" value="${on ? 'false' : 'true'}">
      <button type="submit" role="switch" aria-checked="${on ? 'true' : 'false'}" aria-labelledby="notifications-label"
        aria-describedby="notifications-hint"><span aria-hidden="true">${on ? 'On' : 'Off'}</span></button>
    </form>
  </div>
  <p class="hint" id="notifications-hint">${
    on
      ? 'Events are sent to every enabled endpoint below. Press to switch them all off.'
      : 'No events are sent to any endpoint while this is off. Press to switch notifications on.'
  }</p>`;
}

/** The page of endpoints, and a link to the next one. */
function endpointList(model: ProfilePageModel): Html {
  const { endpoints, user } = model;
  return html`<h3 id="endpoints-heading">Endpoints</h3>
  ${
    endpoints.length === 0
      ? html`<p>No endpoints yet. Create one below.</p>`
      : html`<ul class="endpoints" aria-labelledby="endpoints-heading">${endpoints.map((e) => endpointItem(e, user.csrfToken, model.health.get(e.id)))}</ul>`
  }
  ${model.nextCursor ? html`<p><a href="${PROFILE_URL}?cursor=${encodeURIComponent(model.nextCursor)}#endpoints-heading">More endpoints</a></p>` : null}`;
}

function createEndpointForm(createForm: ProfilePageModel['createForm'], csrfToken: string): Html {
  return html`<h3 id="create-endpoint-heading">Create Endpoint</h3>
  <p class="hint">A new endpoint starts disabled: enable it when it is ready to receive events.</p>
  ${errorSummary(createForm.errors)}
  <form method="post" action="${WEBHOOKS_URL}" aria-labelledby="create-endpoint-heading">
    ${csrfField(csrfToken)}
    ${endpointFields(createForm.values, createForm.errors)}
    <button type="submit">Create Endpoint</button>
  </form>`;
}

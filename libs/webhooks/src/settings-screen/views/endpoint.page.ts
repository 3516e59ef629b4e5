import type { DeliveryView } from '../../read-model/deliveries.queries';
import type { EndpointDetails, EndpointView } from '../../endpoints/endpoint-views';
import {
  endpointFields,
  type EndpointFormValues,
  errorSummary,
  eventTypeLabel,
  type FieldErrors,
} from './endpoint-form';
import { recoverSection, replaySection, when } from './endpoint-health.view';
import { type Html, html } from './html';
import { csrfField, layout, PROFILE_URL } from './layout';
import {
  disabledNote,
  endpointUrl,
  eventTypesSummary,
  rateLimitSummary,
  statusBadge,
  toggleForm,
} from './profile.page';

export interface EndpointPageModel {
  readonly user: { readonly email: string; readonly csrfToken: string };
  readonly flash?: string | null;
  readonly endpoint: EndpointDetails;
  /** Shown once, on the answer to Reveal or Rotate; never stored in the session. */
  readonly secret?: { readonly value: string; readonly rotated: boolean };
  readonly deliveries: readonly DeliveryView[];
  readonly editForm: { readonly values: EndpointFormValues; readonly errors: FieldErrors };
  /** The recovery form's starting value (`datetime-local`, UTC). */
  readonly recoverSince: string;
}

export const RECENT_DELIVERIES = 20;

const REDELIVERABLE = new Set(['failed', 'cancelled']);

function deliveryRow(d: DeliveryView, csrfToken: string): Html {
  return html`<tr id="delivery-${d.id}">
  <td data-label="Event"><a href="/settings/profile/events/${d.event_id}?endpoint=${d.endpoint_id}">${eventTypeLabel(d.event_type)}<span class="visually-hidden">: where this event went</span></a> <span class="hint">(${d.event_type})</span></td>
  <td data-label="Status"><span class="badge ${d.status}">${d.status}</span></td>
  <td data-label="Attempts">${d.attempt_count}</td>
  <td data-label="Last attempt">${when(d.last_attempt_at)}</td>
  <td data-label="Next attempt">${when(d.next_attempt_at)}</td>
  <td data-label="Action">${
    REDELIVERABLE.has(d.status)
      ? html`<form method="post" action="/settings/profile/webhook-deliveries/${d.id}/redeliver">
      ${csrfField(csrfToken)}
      <button type="submit" class="secondary">Resend<span class="visually-hidden"> ${d.event_type} delivery of ${d.created_at}</span></button>
    </form>`
      : html`<span class="hint">${d.status === 'pending' ? 'Sending…' : 'Delivered'}</span>`
  }</td>
</tr>`;
}

/** One endpoint: edit it, its signing secret (reveal, rotate), its recent deliveries (resend). */
export function endpointPage(model: EndpointPageModel): string {
  const { user, endpoint: e } = model;
  return layout({
    title: `Endpoint ${e.url}`,
    user,
    flash: model.flash,
    body: html`<p><a href="${PROFILE_URL}#webhook-settings">← Back to Webhook Settings</a></p>
<h1>Webhook endpoint</h1>
${summarySection(e, user.csrfToken)}

${editSection(e, model.editForm, user.csrfToken)}

${secretSection(e, model.secret, user.csrfToken)}

${deliveriesSection(e, model.deliveries, user.csrfToken)}
${recoverSection(endpointUrl(e.id, 'recover'), user.csrfToken, model.recoverSince)}
${replaySection(endpointUrl(e.id, 'replay'), user.csrfToken, model.recoverSince)}`,
  });
}

function summarySection(e: EndpointDetails, csrfToken: string): Html {
  return html`<section class="panel" aria-labelledby="summary-heading">
  <div class="endpoint-head">
    <h2 class="endpoint-url" id="summary-heading">${e.url}</h2>
    ${statusBadge(e.enabled)}
  </div>
  ${disabledNote(e)}
  <dl class="facts">
    <dt>Description</dt><dd>${e.description || html`<span class="hint">None</span>`}</dd>
    <dt>Event types</dt><dd>${eventTypesSummary(e.event_types)}</dd>
    <dt>Rate limit</dt><dd>${rateLimitSummary(e.rate_limit_per_second)}</dd>
    <dt>Created</dt><dd>${when(e.created_at)}</dd>
  </dl>
  <div class="actions">
    ${toggleForm(e, csrfToken, 'endpoint')}
    <a class="button danger" href="${endpointUrl(e.id, 'delete')}">Delete endpoint</a>
  </div>
</section>`;
}

function editSection(e: EndpointDetails, form: EndpointPageModel['editForm'], csrfToken: string): Html {
  return html`<section class="panel" id="edit" aria-labelledby="edit-heading">
  <h2 id="edit-heading">Edit endpoint</h2>
  ${errorSummary(form.errors)}
  <form method="post" action="${endpointUrl(e.id)}">
    ${csrfField(csrfToken)}
    ${endpointFields(form.values, form.errors)}
    <button type="submit">Save changes</button>
  </form>
</section>`;
}

/** The secret itself only on the answer to Reveal or Rotate. */
function secretSection(e: EndpointDetails, secret: EndpointPageModel['secret'], csrfToken: string): Html {
  return html`<section class="panel" id="signing-secret" aria-labelledby="secret-heading">
  <h2 id="secret-heading">Signing secret</h2>
  <p class="hint">Receivers verify the <code>webhook-signature</code> header with this secret (Standard Webhooks).</p>
  ${
    secret
      ? html`<div role="status">
    ${secret.rotated ? html`<p>A new secret was made. The previous one keeps signing beside it for 24 hours, so receivers can switch over.</p>` : null}
    <p><label for="secret-value">Current signing secret</label></p>
    <output id="secret-value" class="secret">${secret.value}</output>
  </div>`
      : null
  }
  <div class="actions">
    <form method="post" action="${endpointUrl(e.id, 'secret')}">
      ${csrfField(csrfToken)}
      <button type="submit" class="secondary">Reveal secret</button>
    </form>
    <form method="post" action="${endpointUrl(e.id, 'rotate-secret')}">
      ${csrfField(csrfToken)}
      <button type="submit" class="secondary">Rotate secret</button>
    </form>
  </div>
</section>`;
}

function deliveriesSection(e: EndpointDetails, deliveries: readonly DeliveryView[], csrfToken: string): Html {
  return html`<section class="panel" id="deliveries" aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">Recent deliveries</h2>
  ${
    deliveries.length === 0
      ? html`<p>No deliveries yet.</p>`
      : html`<div class="table-scroll"><table>
    <caption class="visually-hidden">The ${RECENT_DELIVERIES} most recent deliveries, newest first</caption>
    <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last attempt</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
    <tbody>${deliveries.map((d) => deliveryRow(d, csrfToken))}</tbody>
  </table></div>`
  }
  <p><a href="${endpointUrl(e.id)}#deliveries">Refresh deliveries</a></p>
</section>`;
}

/** "Delete this endpoint?" — a confirmation page, so no script is needed. */
export function deleteConfirmPage(user: { email: string; csrfToken: string }, e: EndpointView): string {
  return layout({
    title: 'Delete endpoint',
    user,
    body: html`<h1>Delete endpoint</h1>
<section class="panel" aria-labelledby="confirm-heading">
  <h2 id="confirm-heading">Delete <span class="endpoint-url">${e.url}</span>?</h2>
  <p>It stops receiving events at once; deliveries still waiting are cancelled. This cannot be undone.</p>
  <div class="actions">
    <form method="post" action="${endpointUrl(e.id, 'delete')}">
      ${csrfField(user.csrfToken)}
      <button type="submit" class="danger">Delete endpoint</button>
    </form>
    <a class="button secondary" href="${PROFILE_URL}#webhook-settings">Cancel</a>
  </div>
</section>`,
  });
}

/** An error page (403, 404, 409, 429, 500) in the same frame; its link leads back (or to sign-in when signed out). */
export function errorPage(status: number, title: string, message: string): string {
  return layout({
    title,
    body: html`<section class="panel" aria-labelledby="error-heading">
  <h1 id="error-heading">${title}</h1>
  <p>${message}</p>
  <p class="hint">Error ${status}.</p>
  <p><a href="${PROFILE_URL}#webhook-settings">Back to Profile Settings</a></p>
</section>`,
  });
}

import type { EventDelivery } from '../../read-model/deliveries.queries';
import { eventTypeLabel } from './endpoint-form';
import { when } from './endpoint-health.view';
import { type Html, html } from './html';
import { layout, PROFILE_URL } from './layout';
import { endpointUrl } from './profile.page';

export interface EventTimelineModel {
  readonly user: { readonly email: string; readonly csrfToken: string };
  readonly event: { readonly event_id: string; readonly event_type: string; readonly occurred_at: string };
  readonly deliveries: readonly EventDelivery[];
  /** The endpoint the user came from, to lead back to. */
  readonly from: string | null;
}

function attempts(d: EventDelivery): Html {
  if (d.attempts.length === 0) return html`<p class="hint">No attempt yet.</p>`;
  return html`<ol class="timeline">${d.attempts.map(
    (a) =>
      html`<li>${when(a.attempted_at)}: ${
        a.status_code === null
          ? html`<span class="badge failed">no answer</span> ${a.error ?? ''}`
          : html`<span class="badge ${a.status_code >= 200 && a.status_code < 300 ? 'delivered' : 'failed'}">HTTP ${String(a.status_code)}</span>`
      } <span class="hint">(${String(a.duration_ms)} ms)</span></li>`,
  )}</ol>`;
}

/** Where one event went: each endpoint's delivery, and every attempt in time order (GET /events/{id}). */
export function eventTimelinePage(model: EventTimelineModel): string {
  const { event } = model;
  return layout({
    title: `Event ${event.event_id}`,
    user: model.user,
    body: html`<p><a href="${model.from ? `${endpointUrl(model.from)}#deliveries` : `${PROFILE_URL}#webhook-settings`}">← Back</a></p>
<h1>Where this event went</h1>
<section class="panel" aria-labelledby="event-heading">
  <h2 id="event-heading">${eventTypeLabel(event.event_type)} <span class="hint">(${event.event_type})</span></h2>
  <dl class="facts">
    <dt>Event id (webhook-id)</dt><dd><code>${event.event_id}</code></dd>
    <dt>Happened</dt><dd>${when(event.occurred_at)}</dd>
  </dl>
</section>
<section class="panel" aria-labelledby="timeline-heading">
  <h2 id="timeline-heading">Deliveries</h2>
  ${
    model.deliveries.length === 0
      ? html`<p>It went to no endpoint (none was enabled for its type then).</p>`
      : html`<ul class="endpoints">${model.deliveries.map(
          (d) => html`<li id="delivery-${d.delivery_id}">
    <p><a href="${endpointUrl(d.endpoint_id)}">Endpoint ${d.endpoint_id}</a> <span class="badge ${d.status}">${d.status}</span></p>
    ${attempts(d)}
  </li>`,
        )}</ul>`
  }
</section>`,
  });
}

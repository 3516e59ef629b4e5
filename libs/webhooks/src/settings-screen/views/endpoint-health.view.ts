import { successRate } from '../../endpoint-health/endpoint-health';
import type { EndpointHealth } from '../../endpoint-health/endpoint-health.queries';
import { type Html, html } from './html';
import { csrfField } from './layout';

/** A time as the pages show it (`2026-11-22 10:00:00 UTC`), machine-readable in `datetime`; `—` for none. */
export function when(iso: string | null): Html | string {
  if (!iso) return '—';
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC')}</time>`;
}

/** The value of a `datetime-local` input (UTC, to the second) for an instant. */
export function dateTimeLocal(at: Date): string {
  return at.toISOString().slice(0, 19);
}

/** An endpoint's health in its list entry: the newest delivery, the 24 h success rate, failing since. */
export function healthFacts(health: EndpointHealth | undefined): Html {
  const last = health?.lastDelivery ?? null;
  const rate = health ? successRate(health) : null;
  const finished = health ? health.delivered + health.failed : 0;
  const failing = health?.failingSince ?? null;
  return html`<dt>Last delivery</dt><dd>${
    last
      ? html`<span class="badge ${last.status}">${last.status}</span> ${when(last.at)}`
      : html`<span class="hint">None yet</span>`
  }</dd>
    <dt>Success rate (24 h)</dt><dd>${
      rate === null
        ? html`<span class="hint">No finished deliveries</span>`
        : html`${Math.round(rate * 100)}% <span class="hint">(${health!.delivered} of ${finished} delivered)</span>`
    }</dd>
    <dt>Failing since</dt><dd>${failing ? html`<strong>${when(failing)}</strong>` : html`<span class="hint">Not failing</span>`}</dd>${
      health?.failingLong
        ? html`
    <dt>Warning</dt><dd class="warning" role="status"><strong>Every delivery attempt has failed since ${when(failing)}.</strong> Check the receiver: if this goes on the endpoint is disabled automatically (<code>webhook_endpoint.failing</code> was sent to the endpoints that chose it).</dd>`
        : null
    }`;
}

/** "Replay notifications": the account's history of the endpoint's event types, sent to it again. */
export function replaySection(action: string, csrfToken: string, since: string): Html {
  return html`<section class="panel" id="replay" aria-labelledby="replay-heading">
  <h2 id="replay-heading">Replay notifications</h2>
  <p class="hint" id="replay-hint">Every notification of this account that happened in the window (UTC) and matches this endpoint's event
  types is sent to it again, whether or not the endpoint existed then, with its original <code>webhook-id</code>; live deliveries go first.
  At most 100,000 at once.</p>
  <form method="post" action="${action}">
    ${csrfField(csrfToken)}
    <p><label for="replay-since">From (UTC)</label>
    <input type="datetime-local" id="replay-since" name="since" value="${since}" step="1" required aria-describedby="replay-hint"></p>
    <p><label for="replay-until">Until (UTC, optional: up to now)</label>
    <input type="datetime-local" id="replay-until" name="until" step="1" aria-describedby="replay-hint"></p>
    <button type="submit">Replay notifications</button>
  </form>
</section>`;
}

/** "Recover failed deliveries": sends again every failed delivery whose event happened since the time given. */
export function recoverSection(action: string, csrfToken: string, since: string): Html {
  return html`<section class="panel" id="recover" aria-labelledby="recover-heading">
  <h2 id="recover-heading">Recover failed deliveries</h2>
  <p class="hint" id="recover-hint">Every failed delivery whose event happened at or after this time (UTC) is sent again, with the same
  <code>webhook-id</code>: receivers that deduplicate process each event once.</p>
  <form method="post" action="${action}">
    ${csrfField(csrfToken)}
    <p><label for="recover-since">Failed since (UTC)</label>
    <input type="datetime-local" id="recover-since" name="since" value="${since}" step="1" required aria-describedby="recover-hint"></p>
    <button type="submit">Recover failed deliveries</button>
  </form>
</section>`;
}

import type { ClientView } from '@filing/auth';
import { when } from './endpoint-health.view';
import { type Html, html } from './html';
import { csrfField, layout, PROFILE_URL } from './layout';

export const API_CLIENTS_URL = `${PROFILE_URL}/api-clients`;

/** How long the old secret may keep working after a roll: the choices the form offers, in seconds. */
export const KEEP_PREVIOUS_CHOICES: readonly { readonly seconds: number; readonly label: string }[] = [
  { seconds: 0, label: 'None: it stops working now' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 259_200, label: '3 days' },
  { seconds: 604_800, label: '7 days' },
];

export interface ApiClientsPageModel {
  readonly user: { readonly email: string; readonly csrfToken: string };
  readonly flash?: string | null;
  readonly clients: readonly ClientView[];
  /** The secret a roll just made: shown on this answer only, never stored. */
  readonly rolled?: { readonly clientId: string; readonly secret: string; readonly previousExpiresAt: string | null };
}

export function rollSecretUrl(clientId: string): string {
  return `${API_CLIENTS_URL}/${clientId}/roll-secret`;
}

function expirePreviousUrl(clientId: string): string {
  return `${API_CLIENTS_URL}/${clientId}/expire-previous-secret`;
}

/** The Profile Settings tabs, with this page current. */
function tabs(): Html {
  return html`<nav class="tabs" aria-label="Profile Settings">
  <a href="${PROFILE_URL}">Profile</a>
  <a href="${API_CLIENTS_URL}" aria-current="page">API clients</a>
</nav>`;
}

function rolledNotice(rolled: NonNullable<ApiClientsPageModel['rolled']>): Html {
  const previous = rolled.previousExpiresAt
    ? html`The previous secret keeps working until ${when(rolled.previousExpiresAt)}, so your systems can switch over.`
    : html`The previous secret, and every token issued with it, no longer works.`;
  return html`<div role="status" class="notice" id="new-secret">
  <p>A new secret was made for <code>${rolled.clientId}</code>. Copy it now: it is not shown again. ${previous}</p>
  <p><label for="new-secret-value">New client secret</label></p>
  <output id="new-secret-value" class="secret">${rolled.secret}</output>
</div>`;
}

function previousSecretFacts(c: ClientView): Html {
  if (!c.previous_secret_expires_at) return html``;
  return html`<dt>Previous secret works until</dt><dd>${when(c.previous_secret_expires_at)}</dd>
    <dt>Previous secret last used</dt><dd>${c.previous_secret_last_used_at ? when(c.previous_secret_last_used_at) : html`<span class="hint">Never</span>`}</dd>`;
}

function rollForm(c: ClientView, csrfToken: string): Html {
  const selectId = `keep-previous-${c.client_id}`;
  return html`<form method="post" action="${rollSecretUrl(c.client_id)}" class="actions">
  ${csrfField(csrfToken)}
  <label for="${selectId}">Keep the old secret working for</label>
  <select id="${selectId}" name="keep_previous">
    ${KEEP_PREVIOUS_CHOICES.map((k) => html`<option value="${k.seconds}"${k.seconds === 86_400 ? html` selected` : null}>${k.label}</option>`)}
  </select>
  <button type="submit">Roll secret<span class="visually-hidden"> of ${c.client_id}</span></button>
</form>`;
}

function expireForm(c: ClientView, csrfToken: string): Html {
  return html`<form method="post" action="${expirePreviousUrl(c.client_id)}" class="actions">
  ${csrfField(csrfToken)}
  <button type="submit" class="secondary">Stop the previous secret now<span class="visually-hidden"> of ${c.client_id}</span></button>
  <span class="hint">When nothing uses it any more: it and its tokens stop working at once.</span>
</form>`;
}

function clientItem(c: ClientView, csrfToken: string): Html {
  const active = c.status === 'active';
  return html`<li id="client-${c.client_id}" aria-labelledby="client-${c.client_id}-id">
  <div class="endpoint-head">
    <h3 class="endpoint-url" id="client-${c.client_id}-id">${c.client_id}</h3>
    ${active ? html`<span class="badge enabled">Active</span>` : html`<span class="badge disabled">Revoked</span>`}
  </div>
  <dl class="facts">
    <dt>Scope</dt><dd>${c.scope}</dd>
    <dt>Created</dt><dd>${when(c.created_at)}</dd>
    <dt>Secret last used</dt><dd>${c.secret_last_used_at ? when(c.secret_last_used_at) : html`<span class="hint">Never</span>`}</dd>
    ${previousSecretFacts(c)}
  </dl>
  ${active ? rollForm(c, csrfToken) : null}
  ${active && c.previous_secret_expires_at ? expireForm(c, csrfToken) : null}
</li>`;
}

/** Profile Settings → API clients: the account's clients, when each secret was last used, Roll secret. */
export function apiClientsPage(model: ApiClientsPageModel): string {
  const { user, clients } = model;
  return layout({
    title: 'API clients',
    user,
    flash: model.flash,
    body: html`<h1>Profile Settings</h1>
${tabs()}
<section class="panel" id="api-clients" aria-labelledby="api-clients-heading">
  <h2 id="api-clients-heading">API clients</h2>
  <p class="hint">Your systems get API tokens with a client id and secret. Roll a secret to replace it; keep the old one working for a while so that every system can switch to the new one first.</p>
  ${model.rolled ? rolledNotice(model.rolled) : null}
  ${
    clients.length === 0
      ? html`<p>This account has no API clients.</p>`
      : html`<ul class="endpoints" aria-labelledby="api-clients-heading">${clients.map((c) => clientItem(c, user.csrfToken))}</ul>`
  }
</section>`,
  });
}

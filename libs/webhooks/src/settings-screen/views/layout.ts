import { type Html, html } from './html';

export const ASSET_CSS = '/settings/assets/settings.css';
export const PROFILE_URL = '/settings/profile';

export interface SignedInUser {
  readonly email: string;
  readonly csrfToken: string;
}

export interface LayoutOptions {
  readonly title: string;
  readonly body: Html;
  /** Signed in: the header shows the user menu. */
  readonly user?: SignedInUser;
  /** A one-time confirmation ("Endpoint enabled."), announced politely. */
  readonly flash?: string | null;
}

/** The hidden field every form carries. */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** The page frame: skip link, header with the user menu (Profile Settings, Sign out), main. */
export function layout({ title, body, user, flash }: LayoutOptions): string {
  const menu = user
    ? html`<nav aria-label="User menu">
        <details class="user-menu">
          <summary><span class="visually-hidden">User menu for </span>${user.email}</summary>
          <ul>
            <li><a href="${PROFILE_URL}">Profile Settings</a></li>
            <li>
              <form method="post" action="/settings/sign-out">
                ${csrfField(user.csrfToken)}
                <button type="submit">Sign out</button>
              </form>
            </li>
          </ul>
        </details>
      </nav>`
    : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Filing Service</title>
<link rel="stylesheet" href="${ASSET_CSS}">
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="topbar">
  <a class="brand" href="${user ? PROFILE_URL : '/settings/sign-in'}">Filing Service</a>
  ${menu}
</header>
<main id="main" tabindex="-1">
${flash ? html`<div class="notice" role="status">${flash}</div>` : null}
${body}
</main>
</body>
</html>
`.value;
}

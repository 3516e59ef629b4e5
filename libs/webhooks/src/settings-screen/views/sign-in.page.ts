import { html } from './html';
import { csrfField, layout } from './layout';

export interface SignInPageOptions {
  readonly csrfToken: string;
  readonly email?: string;
  /** Shown above the form (wrong credentials, too many attempts, signed out, session expired). */
  readonly error?: string;
  readonly notice?: string;
}

export function signInPage({ csrfToken, email, error, notice }: SignInPageOptions): string {
  return layout({
    title: 'Sign in',
    flash: notice,
    body: html`<div class="sign-in panel">
  <h1>Sign in</h1>
  <p class="hint">Sign in with the email and password of your account user to manage its settings.</p>
  ${error ? html`<div class="error-summary" role="alert" id="sign-in-error"><p>${error}</p></div>` : null}
  <form method="post" action="/settings/sign-in">
    ${csrfField(csrfToken)}
    <div class="field">
      <label for="email">Email</label>
      <input type="email" id="email" name="email" autocomplete="username" required value="${email ?? ''}"${
        error ? html` aria-describedby="sign-in-error"` : null
      }>
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required>
    </div>
    <button type="submit">Sign in</button>
  </form>
</div>`,
  });
}

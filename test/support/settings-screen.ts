/**
 * Helpers for the settings-screen tests: account users (made like `users:create` does, through
 * the CommandBus) and a tiny cookie-keeping HTTP client that reads forms' CSRF tokens.
 */
import { CreateUserCommand } from '@filing/auth';
import { ReadYourWrites } from '@filing/platform';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { TestService } from './service';

export interface TestUser {
  readonly accountId: string;
  readonly email: string;
  readonly password: string;
}

export async function provisionUser(
  service: TestService,
  accountId: string,
  email = `user-${randomUUID().slice(0, 8)}@example.com`,
): Promise<TestUser> {
  const password = `pw-${randomUUID()}`;
  const result = await service.app
    .get(CommandBus)
    .execute(
      new CreateUserCommand(
        { accountId, email, password },
        { account_id: null, actor: 'operator:test', correlation_id: randomUUID(), causation_id: null },
      ),
    );
  await service.app.get(ReadYourWrites).await(result.position);
  return { accountId, email, password };
}

export interface PageResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  readonly location: string | null;
  readonly setCookies: string[];
}

/** The first `_csrf` value on a page. */
export function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('No CSRF token on the page');
  return match[1];
}

/** A browser stand-in: keeps cookies, never follows redirects. */
export class HttpSession {
  /** `extraHeaders` go on every request (e.g. X-Forwarded-Proto); `fetchImpl` e.g. undici's with a test CA. */
  constructor(
    readonly baseUrl: string,
    private readonly extraHeaders: Record<string, string> = {},
    private readonly fetchImpl: typeof fetch = fetch,
    readonly cookies = new Map<string, string>(),
  ) {}

  /** The same browser (one cookie jar) talking to another instance of the site, as behind a load balancer. */
  at(baseUrl: string): HttpSession {
    return new HttpSession(baseUrl, this.extraHeaders, this.fetchImpl, this.cookies);
  }

  get(path: string): Promise<PageResponse> {
    return this.request('GET', path);
  }

  /** POST a form; `fields` values may repeat (arrays). */
  post(path: string, fields: Record<string, string | readonly string[] | undefined>): Promise<PageResponse> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      for (const v of typeof value === 'string' ? [value] : value) form.append(name, v);
    }
    return this.request('POST', path, form);
  }

  /** GET the sign-in page, then POST the form with its token. */
  async signIn(email: string, password: string): Promise<PageResponse> {
    const page = await this.get('/settings/sign-in');
    return this.post('/settings/sign-in', { _csrf: csrfOf(page.body), email, password });
  }

  /** The CSRF token of the signed-in session (read from the profile page). */
  async csrf(): Promise<string> {
    const page = await this.get('/settings/profile');
    if (page.status !== 200) throw new Error(`Profile page answered ${page.status}`);
    return csrfOf(page.body);
  }

  private async request(method: string, path: string, body?: URLSearchParams): Promise<PageResponse> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...this.extraHeaders,
        ...(cookie ? { cookie } : {}),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: body?.toString(),
    });
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: res.status,
      headers: res.headers,
      body: await res.text(),
      location: res.headers.get('location'),
      setCookies,
    };
  }
}

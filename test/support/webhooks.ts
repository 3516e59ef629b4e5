/** Helpers for the webhook end-to-end tests: a JSON API client and polling without timed assertions. */
import { bearer } from './auth';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export type Api = <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse<T>>;

/** Calls `{base}{path}` with the token; a body is sent as JSON. */
export function apiClient(baseUrl: string, token: string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...bearer(token), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };
}

/** Polls until `check` returns a value (not undefined); the Jest timeout bounds it. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, intervalMs = 25): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

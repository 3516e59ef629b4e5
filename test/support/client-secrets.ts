/**
 * Client-secret rotation over real HTTP, for the e2e and cluster specs: the operator routes, a
 * token request that reports its answer (not only success), and whether a token still works.
 */
import { bearer } from './auth';

export interface JsonAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function answer(res: Response): Promise<JsonAnswer> {
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** `POST /internal-api/v1/clients/{id}/rotate-secret` with `body` as JSON (none when undefined). */
export async function rotateSecret(
  baseUrl: string,
  operatorToken: string,
  clientId: string,
  body?: unknown,
): Promise<JsonAnswer> {
  const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  const res = await fetch(`${baseUrl}/internal-api/v1/clients/${clientId}/rotate-secret`, {
    method: 'POST',
    headers: { ...bearer(operatorToken), ...json },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return answer(res);
}

export async function expirePreviousSecret(baseUrl: string, operatorToken: string, clientId: string) {
  const res = await fetch(`${baseUrl}/internal-api/v1/clients/${clientId}/expire-previous-secret`, {
    method: 'POST',
    headers: bearer(operatorToken),
  });
  return answer(res);
}

export async function getClient(baseUrl: string, operatorToken: string, clientId: string): Promise<JsonAnswer> {
  return answer(await fetch(`${baseUrl}/internal-api/v1/clients/${clientId}`, { headers: bearer(operatorToken) }));
}

/** `POST /o/token/` with the secret in the form: the status and body, whatever they are. */
export async function tokenRequest(baseUrl: string, clientId: string, clientSecret: string): Promise<JsonAnswer> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  return answer(await fetch(`${baseUrl}/o/token/`, { method: 'POST', body: form }));
}

/** The status a customer token gets on the external API (200 while it works, 401 once it does not). */
export async function tokenStatus(baseUrl: string, token: string): Promise<number> {
  const res = await fetch(`${baseUrl}/external-api/v1/entities?limit=1`, { headers: bearer(token) });
  await res.arrayBuffer();
  return res.status;
}

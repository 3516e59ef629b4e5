/**
 * RFC 8414 authorization server metadata (CONTRACT.md §1): a client library that discovers the
 * endpoints (oauth4webapi) finds the token endpoint and gets a token with it; the URLs come from
 * PUBLIC_URL (or localhost), never from a Host or X-Forwarded-Host header a client sends.
 */
import { request } from 'node:http';
import * as oauth from 'oauth4webapi';
import { provisionAccount } from '../support/auth';
import { tokenStatus } from '../support/client-secrets';
import { startService, type TestService } from '../support/service';

const WELL_KNOWN = '/.well-known/oauth-authorization-server';

/** GET with any Host header (fetch will not send a forged one). */
async function getRaw(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('authorization server metadata', () => {
  describe('without PUBLIC_URL', () => {
    let service: TestService;
    let issuer: URL;
    beforeAll(async () => {
      service = await startService();
      issuer = new URL(`http://localhost:${new URL(service.url).port}`);
    }, 60_000);
    afterAll(async () => service?.destroy());

    it('oauth4webapi discovers the token endpoint and gets a client-credentials token with it', async () => {
      const c = await provisionAccount(service);
      const response = await oauth.discoveryRequest(issuer, {
        algorithm: 'oauth2',
        [oauth.allowInsecureRequests]: true,
      });
      const as = await oauth.processDiscoveryResponse(issuer, response);
      expect(as.token_endpoint).toBe(`${issuer.origin}/o/token/`);

      const client: oauth.Client = { client_id: c.clientId };
      for (const auth of [oauth.ClientSecretBasic(c.clientSecret), oauth.ClientSecretPost(c.clientSecret)]) {
        const grant = await oauth.clientCredentialsGrantRequest(
          as,
          client,
          auth,
          new URLSearchParams({ scope: 'read' }),
          {
            [oauth.allowInsecureRequests]: true,
          },
        );
        const result = await oauth.processClientCredentialsResponse(as, client, grant);
        expect(result).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'read' });
        expect(await tokenStatus(service.url, result.access_token)).toBe(200);
      }
    });

    it('says what RFC 8414 asks for, with every URL on localhost whatever Host the request names', async () => {
      const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
      const { status, body } = await getRaw(`${service.url}${WELL_KNOWN}`, forged);
      expect(status).toBe(200);
      const origin = issuer.origin;
      expect(body).toEqual({
        issuer: origin,
        token_endpoint: `${origin}/o/token/`,
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        revocation_endpoint: `${origin}/o/revoke_token/`,
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        introspection_endpoint: `${origin}/o/introspect/`,
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        grant_types_supported: ['client_credentials'],
        response_types_supported: [],
        scopes_supported: ['read', 'write', 'operator'],
        service_documentation: `${origin}/docs`,
      });
      expect(JSON.stringify(body)).not.toContain('evil.example');
    });
  });

  describe('with PUBLIC_URL', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startService({ env: { PUBLIC_URL: 'https://filing.example.com/' } });
    }, 60_000);
    afterAll(async () => service?.destroy());

    it('every URL is on the public origin, whatever Host the request names', async () => {
      const { body } = await getRaw(`${service.url}${WELL_KNOWN}`, { host: 'evil.example' });
      expect(body).toMatchObject({
        issuer: 'https://filing.example.com',
        token_endpoint: 'https://filing.example.com/o/token/',
        revocation_endpoint: 'https://filing.example.com/o/revoke_token/',
        introspection_endpoint: 'https://filing.example.com/o/introspect/',
      });
      expect(JSON.stringify(body)).not.toContain('evil.example');
    });
  });
});

import { parseBasic } from './client-authenticator';
import { requirementOf } from './api-access.guard';

const basic = (raw: string) => `Basic ${Buffer.from(raw, 'utf8').toString('base64')}`;

describe('parseBasic (RFC 6749 §2.3.1)', () => {
  it('decodes form-urlencoded client_id and secret', () => {
    expect(parseBasic(basic('my%20client:s%3Ae+cret%25'))).toEqual({ clientId: 'my client', secret: 's:e cret%' });
    expect(parseBasic(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({ clientId: 'a', secret: 'b' });
  });

  it('refuses other schemes, missing parts and bad encodings', () => {
    expect(parseBasic('Bearer abc')).toBeNull();
    expect(parseBasic(basic('no-colon'))).toBeNull();
    expect(parseBasic(basic(':secret'))).toBeNull();
    expect(parseBasic(basic('id:%E0%A4%A'))).toBeNull();
    expect(parseBasic('Basic !!!')).toBeNull();
  });
});

describe('requirementOf', () => {
  it('needs read for GET/HEAD and write otherwise on the external API, operator on the internal API', () => {
    expect(requirementOf('/external-api/v1/entities', 'GET')).toEqual({ realm: 'external-api', scope: 'read' });
    expect(requirementOf('/external-api/v1/entities/:id', 'HEAD')).toEqual({ realm: 'external-api', scope: 'read' });
    expect(requirementOf('/external-api/v1/entities', 'POST')).toEqual({ realm: 'external-api', scope: 'write' });
    expect(requirementOf('/external-api/v1/entities/:id', 'DELETE')).toEqual({ realm: 'external-api', scope: 'write' });
    expect(requirementOf('/internal-api/v1/accounts', 'GET')).toEqual({ realm: 'internal-api', scope: 'operator' });
  });

  it('leaves other paths public', () => {
    expect(requirementOf('/healthz', 'GET')).toBeNull();
    expect(requirementOf('/o/token', 'POST')).toBeNull();
    expect(requirementOf('/external-api/v1/openapi.json', 'GET')).toBeNull();
  });
});

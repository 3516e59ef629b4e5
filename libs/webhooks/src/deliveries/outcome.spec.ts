import { classifyAttempt, endpointDisabledBy, endpointPausedFor, errorKind, errorMessage } from './outcome';

describe('attempt outcome', () => {
  it.each([200, 201, 202, 204, 299])('%d is delivered', (statusCode) =>
    expect(classifyAttempt({ kind: 'response', statusCode })).toBe('delivered'),
  );
  it.each([500, 502, 503, 504, 408, 429])('%d is retried', (statusCode) =>
    expect(classifyAttempt({ kind: 'response', statusCode })).toBe('retry'),
  );
  it.each([301, 302, 307, 308, 400, 401, 403, 404, 410, 422])('%d fails at once', (statusCode) =>
    expect(classifyAttempt({ kind: 'response', statusCode })).toBe('failed'),
  );
  it.each(['timeout', 'connection', 'tls', 'dns', 'address_refused', 'other'] as const)(
    'a %s error is retried',
    (error) => expect(classifyAttempt({ kind: 'error', error })).toBe('retry'),
  );

  it('a 429 with Retry-After pauses the whole endpoint that long; a 429 without one, a 503 with one, or an error does not', () => {
    expect(endpointPausedFor({ kind: 'response', statusCode: 429 }, 2_000)).toBe(2_000);
    expect(endpointPausedFor({ kind: 'response', statusCode: 429 }, null)).toBeNull();
    expect(endpointPausedFor({ kind: 'response', statusCode: 503 }, 2_000)).toBeNull();
    expect(endpointPausedFor({ kind: 'error', error: 'timeout' }, null)).toBeNull();
  });

  it('410 Gone also disables the endpoint (reason gone); no other answer or error does', () => {
    expect(endpointDisabledBy({ kind: 'response', statusCode: 410 })).toBe('gone');
    for (const statusCode of [200, 400, 404, 429, 500, 503])
      expect(endpointDisabledBy({ kind: 'response', statusCode })).toBeNull();
    expect(endpointDisabledBy({ kind: 'error', error: 'timeout' })).toBeNull();
  });

  it('tells errors apart by code, through causes', () => {
    expect(errorKind(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('connection');
    expect(
      errorKind(
        new Error('fetch failed', {
          cause: Object.assign(new Error('y'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }),
        }),
      ),
    ).toBe('tls');
    expect(errorKind(Object.assign(new Error('x'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }))).toBe('tls');
    expect(errorKind(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('timeout');
    expect(errorKind(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(errorKind(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))).toBe('dns');
    expect(errorKind(Object.assign(new Error('x'), { code: 'ADDRESS_REFUSED' }))).toBe('address_refused');
    expect(errorKind(new Error('?'))).toBe('other');
    expect(errorMessage('tls')).toMatch(/^tls:/);
  });
});

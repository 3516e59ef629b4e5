import { Writable } from 'node:stream';
import { createLogger, PinoNestLogger } from './logger';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('trace', stream) };
}

describe('logger', () => {
  it('censors credentials wherever they appear in a logged object', () => {
    const { lines, logger } = capture();
    logger.info({ client_secret: 'S3CRET-1', headers: { authorization: 'Bearer TOKEN-1' } }, 'token request');
    logger.warn({ body: { access_token: 'TOKEN-2', token: 'TOKEN-3', password: 'PW-1' } }, 'refused');
    const text = lines.join('');
    for (const secret of ['S3CRET-1', 'TOKEN-1', 'TOKEN-2', 'TOKEN-3', 'PW-1']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });

  it('censors secret-named keys at any depth, in arrays and in errors, and keeps the rest', () => {
    const { lines, logger } = capture();
    const deep = { a: { b: { c: { d: { e: { client_secret: 'DEEP-1', Authorization: 'Bearer DEEP-2' } } } } } };
    const failure = Object.assign(new Error('upstream refused'), {
      request: { headers: { 'x-request-id': 'req-1', 'x-api-key': 'DEEP-9', cookie: 'filing_session=DEEP-3' } },
      body: { refresh_token: 'DEEP-4' },
    });
    logger.warn(
      {
        deep,
        batch: [{ user: { newPassword: 'DEEP-5' } }, { webhook: { signing_secret: 'DEEP-6', secretsKey: 'DEEP-7' } }],
        kept: { token_type: 'Bearer', secret_fingerprint: 'fp-1', count: 3 },
        err: failure,
      },
      'nested',
    );
    new PinoNestLogger(logger).error({ outer: [{ inner: { access_token: 'DEEP-8' } }] }, 'Context');
    const text = lines.join('');
    for (const secret of ['DEEP-1', 'DEEP-2', 'DEEP-3', 'DEEP-4', 'DEEP-5', 'DEEP-6', 'DEEP-7', 'DEEP-8', 'DEEP-9'])
      expect(text).not.toContain(secret);
    const [line] = lines.map((l) => JSON.parse(l) as Record<string, any>);
    expect(line.deep.a.b.c.d.e).toEqual({ client_secret: '[redacted]', Authorization: '[redacted]' });
    expect(line.kept).toEqual({ token_type: 'Bearer', secret_fingerprint: 'fp-1', count: 3 });
    expect(line.err).toMatchObject({
      type: 'Error',
      message: 'upstream refused',
      body: { refresh_token: '[redacted]' },
    });
    expect(line.err.request.headers['x-request-id']).toBe('req-1');
    expect(line.err.stack).toContain('upstream refused');
  });

  it('writes a circular object once, a shared one twice and a very deep one cut off, without throwing', () => {
    const { lines, logger } = capture();
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const shared = { kept: 'twice' };
    let deep: Record<string, unknown> = { password: 'BOTTOM' };
    for (let i = 0; i < 40; i++) deep = { next: deep };
    logger.info({ loop, deep, one: shared, two: shared }, 'shapes');
    const text = lines.join('');
    expect(text).not.toContain('BOTTOM');
    expect(JSON.parse(text)).toMatchObject({
      loop: { name: 'loop', self: '[circular]' },
      one: { kept: 'twice' },
      two: { kept: 'twice' },
    });
  });

  it('carries Nest contexts and errors as JSON lines', () => {
    const { lines, logger } = capture();
    const nest = new PinoNestLogger(logger);
    nest.log('started', 'Bootstrap');
    nest.error(new Error('boom'), 'Runner');
    const [started, failed] = lines.map((l) => JSON.parse(l));
    expect(started).toMatchObject({ level: 30, context: 'Bootstrap', msg: 'started' });
    expect(failed).toMatchObject({ level: 50, context: 'Runner', msg: 'boom', err: { message: 'boom' } });
  });
});

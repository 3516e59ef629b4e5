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

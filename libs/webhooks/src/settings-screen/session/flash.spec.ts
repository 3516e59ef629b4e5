import type { FastifyReply } from 'fastify';
import { FLASH_COOKIE, setFlash, takeFlash } from './flash';

/** The reply of a request that sent `cookie`; `sent` collects its Set-Cookie lines. */
function replyTo(cookie?: string): { reply: FastifyReply; sent: string[] } {
  const sent: string[] = [];
  const reply = {
    request: { headers: cookie ? { cookie } : {}, protocol: 'http' },
    header: (name: string, value: string) => {
      if (name === 'set-cookie') sent.push(value);
      return reply;
    },
  } as unknown as FastifyReply;
  return { reply, sent };
}

describe('flash messages', () => {
  const session = 'session-token-one';

  it('carries a message to the next page of the same session once, in a cookie any instance can read', () => {
    const post = replyTo();
    setFlash(post.reply, session, 'Endpoint https://example.com/h was created.');
    const cookie = post.sent[0].split(';')[0];
    expect(cookie.startsWith(`${FLASH_COOKIE}=`)).toBe(true);
    expect(post.sent[0]).toContain('HttpOnly; SameSite=Strict');

    const page = replyTo(cookie);
    expect(takeFlash(page.reply, session)).toBe('Endpoint https://example.com/h was created.');
    expect(page.sent).toEqual([expect.stringMatching(new RegExp(`^${FLASH_COOKIE}=; .*Max-Age=0`))]);
    expect(takeFlash(replyTo().reply, session)).toBeNull();
  });

  it('ignores a message made for another session or altered (nobody can plant one), and clears it', () => {
    const post = replyTo();
    setFlash(post.reply, 'another-session', 'Your account is closed. Call +1 555 0100.');
    const planted = post.sent[0].split(';')[0];
    const page = replyTo(planted);
    expect(takeFlash(page.reply, session)).toBeNull();
    expect(page.sent).toHaveLength(1);
    const [name, value] = planted.split('=');
    const altered = `${name}=${Buffer.from('Other text').toString('base64url')}.${value.split('.')[1]}`;
    expect(takeFlash(replyTo(altered).reply, 'another-session')).toBeNull();
    expect(takeFlash(replyTo(`${FLASH_COOKIE}=garbage`).reply, session)).toBeNull();
  });
});

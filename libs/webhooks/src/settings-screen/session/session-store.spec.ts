import { SqliteEventStore } from '@filing/event-store';
import { ProjectionRunner, ReadYourWrites } from '@filing/platform';
import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SettingsSessionStore } from './session-store';
import { SettingsSessionsProjection } from './sessions.projection';

describe('SettingsSessionStore', () => {
  const user = { userId: 'u1', accountId: 'a1', email: 'a@example.com' };
  const limits = { idleMs: 1000, absoluteMs: 5000, activityEveryMs: 100 };
  let dir: string;
  let events: SqliteEventStore;
  let runners: ProjectionRunner[];
  let now: number;

  /** One instance: its own read models on the shared event store. */
  async function instance(): Promise<{ sessions: SettingsSessionStore; runner: ProjectionRunner }> {
    const runner = new ProjectionRunner({
      store: events,
      file: ':memory:',
      projections: [new SettingsSessionsProjection()],
    });
    await runner.start();
    runners.push(runner);
    const sessions = new SettingsSessionStore(events, runner, new ReadYourWrites(runner), limits);
    sessions.clock = () => now;
    return { sessions, runner };
  }

  /** What the HTTP layer does before each request with esdb: wait for the local read models to reach the store's head. */
  async function caughtUp(runner: ProjectionRunner): Promise<void> {
    expect(await runner.waitFor(await events.headPosition(), 5000)).toBe(true);
  }

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    dir = mkdtempSync(join(tmpdir(), 'settings-sessions-'));
    events = new SqliteEventStore({ file: join(dir, 'events.db') });
    runners = [];
    now = Date.now();
  });
  afterEach(async () => {
    for (const runner of runners) await runner.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it('finds a session by its token only, with a CSRF token of its own; events hold neither token, only the hash', async () => {
    const { sessions } = await instance();
    const { token, session } = await sessions.create(user);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(session.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(await sessions.get(token)).toMatchObject({ ...user, csrfToken: session.csrfToken });
    expect(await sessions.get(undefined)).toBeNull();
    expect(await sessions.get(`${token}x`)).toBeNull();
    expect((await sessions.create(user)).session.csrfToken).not.toBe(session.csrfToken);

    const stored = JSON.stringify((await events.readAll()).map((e) => [e.streamId, e.data, e.metadata]));
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(session.csrfToken);
    expect(stored).toContain(createHash('sha256').update(token).digest('hex'));
  });

  it('a session made on one instance works on another, and signing out on either ends it on both', async () => {
    const a = await instance();
    const b = await instance();
    const { token, session } = await a.sessions.create(user);
    await caughtUp(b.runner);
    expect(await b.sessions.get(token)).toMatchObject({ ...user, csrfToken: session.csrfToken });

    await b.sessions.destroy(token);
    expect(await b.sessions.get(token)).toBeNull();
    await caughtUp(a.runner);
    expect(await a.sessions.get(token)).toBeNull();
  });

  it('ends a session after the idle time; use on any instance restarts the idle clock, up to the absolute limit', async () => {
    const a = await instance();
    const b = await instance();
    const { token } = await a.sessions.create(user);
    for (let i = 0; i < 2; i++) {
      now += 999;
      await caughtUp(b.runner);
      expect(await b.sessions.get(token)).not.toBeNull(); // used on b only
    }
    await caughtUp(a.runner);
    now += 999;
    expect(await a.sessions.get(token)).not.toBeNull(); // a knows of the use on b
    now += 1000;
    expect(await a.sessions.get(token)).toBeNull();
    await caughtUp(b.runner);
    expect(await b.sessions.get(token)).toBeNull();

    const second = await a.sessions.create(user);
    for (let i = 0; i < 5; i++) {
      now += 990;
      expect(await a.sessions.get(second.token)).not.toBeNull();
    }
    now += 50; // 5,000 ms after sign-in
    expect(await a.sessions.get(second.token)).toBeNull();
  });

  it('records a use at most once per activityEveryMs: a session may end up to that much early, never late', async () => {
    const { sessions } = await instance();
    const { token } = await sessions.create(user);
    const count = async () => (await events.readAll()).length;
    const afterSignIn = await count();
    now += 50;
    await sessions.get(token);
    expect(await count()).toBe(afterSignIn);
    now += 50;
    await sessions.get(token);
    expect(await count()).toBe(afterSignIn + 1);
    now += 999; // 999 ms after the recorded use, 1,049 after sign-in
    expect(await sessions.get(token)).not.toBeNull();
  });

  it('a rebuilt read model (a new DATA_DIR) knows the same sessions', async () => {
    const a = await instance();
    const live = await a.sessions.create(user);
    const ended = await a.sessions.create(user);
    await a.sessions.destroy(ended.token);
    const fresh = await instance();
    await caughtUp(fresh.runner);
    expect(await fresh.sessions.get(live.token)).not.toBeNull();
    expect(await fresh.sessions.get(ended.token)).toBeNull();
  });
});

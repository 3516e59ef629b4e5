import { SettingsSessionStore } from './session-store';

describe('SettingsSessionStore', () => {
  const user = { userId: 'u1', accountId: 'a1', email: 'a@example.com' };
  let store: SettingsSessionStore;
  let now: number;

  beforeEach(() => {
    store = new SettingsSessionStore(':memory:', { idleMs: 1000, absoluteMs: 5000 });
    now = 1_000_000;
    store.clock = () => now;
  });
  afterEach(() => store.close());

  it('finds a session by its token only, with its own CSRF token', () => {
    const { token, session } = store.create(user);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(session.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(store.get(token)).toMatchObject({ ...user, csrfToken: session.csrfToken });
    expect(store.get(undefined)).toBeNull();
    expect(store.get(`${token}x`)).toBeNull();
    expect(store.create(user).session.csrfToken).not.toBe(session.csrfToken);
  });

  it('ends a session after the idle time; use restarts the idle clock up to the absolute limit', () => {
    const { token } = store.create(user);
    for (let i = 0; i < 2; i++) {
      now += 999;
      expect(store.get(token)).not.toBeNull();
    }
    now += 1000; // 2,998 ms after sign-in, 1,000 idle
    expect(store.get(token)).toBeNull();

    const second = store.create(user);
    for (let i = 0; i < 5; i++) {
      now += 990;
      expect(store.get(second.token)).not.toBeNull();
    }
    now += 50; // 5,000 ms after sign-in
    expect(store.get(second.token)).toBeNull();
  });

  it('forgets a destroyed session; a flash message is shown once', () => {
    const { token } = store.create(user);
    store.setFlash(token, 'Saved.');
    expect(store.takeFlash(token)).toBe('Saved.');
    expect(store.takeFlash(token)).toBeNull();
    store.destroy(token);
    expect(store.get(token)).toBeNull();
  });
});

import { FailedAuthThrottle } from './failed-auth-throttle';

describe('FailedAuthThrottle', () => {
  let now = 0;
  const throttle = () =>
    new FailedAuthThrottle({ windowMs: 60_000, perClient: 3, perAddress: 5, maxKeys: 4 }, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('limits a client_id after its quota of failures, until the oldest leaves the window', () => {
    const t = throttle();
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfter('c1', `10.0.0.${i}`)).toBeNull();
      t.recordFailure('c1', `10.0.0.${i}`);
      now += 10_000;
    }
    // The oldest failure was 30 s ago: 30 s left in the 60 s window.
    expect(t.retryAfter('c1', '10.0.0.9')).toBe(30);
    expect(t.retryAfter('c2', '10.0.0.9')).toBeNull();
    now += 30_000;
    expect(t.retryAfter('c1', '10.0.0.9')).toBeNull();
  });

  it('limits an address across client_ids', () => {
    const t = throttle();
    for (let i = 0; i < 5; i++) t.recordFailure(`c${i}`, '10.0.0.1');
    expect(t.retryAfter('fresh', '10.0.0.1')).toBe(60);
    expect(t.retryAfter('fresh', '10.0.0.2')).toBeNull();
  });

  it('keeps at most maxKeys keys, dropping the least recently failed', () => {
    const t = throttle();
    for (let i = 0; i < 3; i++) t.recordFailure('c1', 'x');
    for (let i = 0; i < 3; i++) t.recordFailure(`other${i}`, 'y');
    expect(t.retryAfter('c1', 'z')).toBeNull();
  });

  it('forgets everything on reset', () => {
    const t = throttle();
    for (let i = 0; i < 3; i++) t.recordFailure('c1', 'x');
    t.reset();
    expect(t.retryAfter('c1', 'x')).toBeNull();
  });
});

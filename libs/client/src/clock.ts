/** The time source of the token manager and the webhook verifier; inject a fake one in tests. */
export interface Clock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

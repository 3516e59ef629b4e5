/**
 * Helpers for the SDK tests against the real service: a fetch that counts what the SDK sends
 * (by path), a settable clock, and exact-shape checks that tie the SDK's types to the service's JSON.
 */
import type { Clock, FetchLike } from '@filing/client';

export interface CountingFetch {
  readonly fetch: FetchLike;
  /** Requests sent so far whose path starts with `prefix`. */
  count(prefix: string): number;
  /** Every request, `METHOD /path`, in order. */
  readonly log: string[];
}

/** The global fetch, recording method and path of every request (never headers or bodies). */
export function countingFetch(): CountingFetch {
  const log: string[] = [];
  return {
    log,
    fetch: (input, init) => {
      log.push(`${init.method ?? 'GET'} ${new URL(input).pathname}`);
      return fetch(input, init);
    },
    count: (prefix) => log.filter((l) => l.split(' ')[1].startsWith(prefix)).length,
  };
}

/** Starts at real time (so the service agrees on `now`), moves only when told. */
export class TestClock implements Clock {
  ms = Date.now();
  now(): number {
    return this.ms;
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/**
 * The exact key set of an SDK type, checked by the compiler in both directions (a missing or an
 * extra key does not compile): `shape<Entity>()({ id: 1, name: 1, ... })`.
 */
export const shape =
  <T>() =>
  <K extends Record<keyof T, 1>>(keys: K & Record<Exclude<keyof K, keyof T>, never>): string[] =>
    Object.keys(keys).sort();

/** The value's own keys, sorted, to compare with a `shape`. */
export const keysOf = (value: object): string[] => Object.keys(value).sort();

import type Database from 'better-sqlite3';

/** What a read-model cache keeps for one database handle. */
export interface PerHandle<T> {
  /** The handle's state, made at its first use. */
  of(db: Database.Database): T;
  /** The handle's state if it has any. */
  peek(db: Database.Database): T | undefined;
}

/**
 * State kept per read-model database handle, as the caches in front of SQLite keep theirs: a
 * replay swaps in a new handle, which starts with none, and two apps in one process have one
 * each; a handle's state goes with it (a WeakMap).
 */
export function perHandle<T>(make: () => T): PerHandle<T> {
  const states = new WeakMap<Database.Database, T>();
  return {
    of(db) {
      let state = states.get(db);
      if (state === undefined) states.set(db, (state = make()));
      return state;
    },
    peek: (db) => states.get(db),
  };
}

/**
 * `map.set`, for a cache bounded at `max` entries: once full it starts over rather than evict
 * one by one (its hot entries come back at the next reads; no bookkeeping per hit).
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max) map.clear();
  map.set(key, value);
}

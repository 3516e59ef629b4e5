/**
 * Interleaves per-endpoint queues, up to `free` items: the first of every queue, then the
 * second of every queue, and so on. With slots for only part of the work, every endpoint listed
 * gets a turn before any gets a second, so a long queue never holds up a short one.
 */
export function roundRobin<T>(queues: ReadonlyArray<readonly T[]>, free: number): T[] {
  const picked: T[] = [];
  for (let depth = 0; picked.length < free; depth++) {
    const row = queues.filter((q) => depth < q.length).map((q) => q[depth]);
    if (row.length === 0) break;
    picked.push(...row.slice(0, free - picked.length));
  }
  return picked;
}

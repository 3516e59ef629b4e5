import { readdirSync, readFileSync } from 'node:fs';

/**
 * The names of this process's threads (docs/operations.md, "Threads"), from /proc; null off
 * Linux, where the service's threads are not named.
 */
export function threadNames(): string[] | null {
  if (process.platform !== 'linux') return null;
  return readdirSync('/proc/self/task').map((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      return ''; // a thread that ended meanwhile
    }
  });
}

/** How many of this process's threads have `name` (0 off Linux). */
export function threadsNamed(name: string): number {
  return (threadNames() ?? []).filter((n) => n === name).length;
}

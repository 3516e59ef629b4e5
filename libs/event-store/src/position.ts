import type { Position } from './event-store.port';

export const START_POSITION: Position = Object.freeze({ commit: 0n, prepare: 0n });

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** `commit/prepare`, e.g. `4096/4096`: what checkpoints and exports persist. */
export function positionToString(p: Position): string {
  return `${p.commit}/${p.prepare}`;
}

export function parsePosition(text: string): Position {
  const match = /^(\d{1,20})\/(\d{1,20})$/.exec(text);
  if (!match) throw new RangeError(`Not a position: ${JSON.stringify(text)}`);
  return { commit: BigInt(match[1]), prepare: BigInt(match[2]) };
}

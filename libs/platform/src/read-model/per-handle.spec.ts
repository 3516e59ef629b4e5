import Database from 'better-sqlite3';
import { perHandle, setBounded } from './per-handle';

describe('perHandle', () => {
  it('keeps one state per database handle, made at its first use', () => {
    const a = new Database(':memory:');
    const b = new Database(':memory:');
    let made = 0;
    const states = perHandle(() => ({ n: ++made }));
    expect(states.peek(a)).toBeUndefined();
    expect(states.of(a)).toBe(states.of(a));
    expect(states.of(b)).not.toBe(states.of(a));
    expect(made).toBe(2);
    a.close();
    b.close();
  });
});

describe('setBounded', () => {
  it('starts the map over once it holds the bound', () => {
    const map = new Map<string, number>();
    setBounded(map, 'a', 1, 2);
    setBounded(map, 'b', 2, 2);
    expect([...map]).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    setBounded(map, 'c', 3, 2);
    expect([...map]).toEqual([['c', 3]]);
  });
});

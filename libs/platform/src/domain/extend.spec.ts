import { setFlagsFromString } from 'node:v8';
import { extend } from './extend';

// V8's own test intrinsic: whether two objects have one hidden class.
setFlagsFromString('--allow-natives-syntax');
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- %HaveSameMap parses only in code compiled after the flag is set
const sameShape = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

describe('extend', () => {
  it('is the spread it stands for: the same keys in the same order, later values winning', () => {
    const base = { a: 1, b: 'x', c: null as string | null };
    const cases: Array<[object, object]> = [
      [extend(base, { b: 'y', d: true }), { ...base, b: 'y', d: true }],
      [extend(base, {}), { ...base }],
      [extend({}, { d: 1 }), { d: 1 }],
    ];
    for (const [got, spread] of cases) {
      expect(Object.keys(got)).toEqual(Object.keys(spread));
      expect(got).toEqual(spread);
    }
    const three = extend(base, { b: 'y' }, { c: 'z', e: 2 });
    expect(Object.entries(three)).toEqual(Object.entries({ ...base, b: 'y', c: 'z', e: 2 }));
  });

  it('returns a new object and leaves its arguments as they were', () => {
    const base = { a: 1 };
    const extra = { b: 2 };
    const got = extend(base, extra);
    expect(got).not.toBe(base);
    expect(base).toEqual({ a: 1 });
    expect(extra).toEqual({ b: 2 });
  });

  it('copies own enumerable properties only, as a spread does', () => {
    const proto = { inherited: 1 };
    const base = Object.create(proto, {
      own: { value: 1, enumerable: true },
      hidden: { value: 2, enumerable: false },
    }) as { own: number };
    expect(extend(base, { x: 1 })).toEqual({ ...base, x: 1 });
    expect(Object.keys(extend(base, { x: 1 }))).toEqual(['own', 'x']);
  });

  it('gives objects built the same way one hidden class, call after call (why it exists)', () => {
    const make = (base: { newStream: boolean }) => extend(base, { store: 1, streamId: 'x' });
    const results = Array.from({ length: 50 }, () => make({ newStream: true }));
    expect(results.slice(10).every((r) => sameShape(r, results[10]))).toBe(true);
  });
});

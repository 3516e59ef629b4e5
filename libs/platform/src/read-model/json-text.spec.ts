import { jsonObject, jsonString, jsonValue } from './json-text';

/** Strings JSON.stringify escapes, or might be thought to: quotes, controls, non-ASCII, lone surrogates. */
const TRICKY_STRINGS = [
  '',
  'plain-id_0193',
  '2026-11-24T06:10:29.396Z',
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '\u0000\u001f\u007f',
  'café',
  'emoji 😀',
  'lone \ud800 surrogate',
  'lone \udc00 low',
  '</script>',
  '\u2028\u2029',
  '~ !#$%&()*+,-./:;<=>?@[]^_`{|}',
];

describe('JSON text of projected values', () => {
  it('writes every string exactly as JSON.stringify does', () => {
    for (const text of TRICKY_STRINGS) expect(jsonString(text)).toBe(JSON.stringify(text));
    // Every single UTF-16 code unit, alone and inside printable text.
    for (let code = 0; code < 0x10000; code++) {
      const char = String.fromCharCode(code);
      expect(jsonString(char)).toBe(JSON.stringify(char));
      expect(jsonString(`a${char}b`)).toBe(JSON.stringify(`a${char}b`));
    }
  });

  it('writes numbers, booleans, null and nested values as JSON.stringify does', () => {
    for (const value of [0, -0, 1.5, 1e21, -7, NaN, Infinity, true, false, null, [1, 'a', null], { a: { b: 'c' } }])
      expect(jsonValue(value)).toBe(JSON.stringify(value));
  });

  it('writes a plain object as JSON.stringify does: its key order, undefined left out', () => {
    const objects: object[] = [
      {},
      { entity_id: 'e1', order_id: null, status: 'active' },
      { entity_id: undefined, order_id: 'o"1', status: 'x\ny' },
      { 'we"ird': 1, '2': 'index keys first', a: [undefined, 'b'], nested: { z: 1, a: 2 } },
      { only: undefined },
      { fn: () => 1, sym: Symbol('s'), kept: 'yes' },
      { when: new Date(0) },
    ];
    for (const object of objects) expect(jsonObject(object)).toBe(JSON.stringify(object));
  });

  it('defers to JSON.stringify for objects that serialize themselves or are not plain', () => {
    const custom = { toJSON: () => ({ replaced: true }) };
    expect(jsonObject(custom)).toBe(JSON.stringify(custom));
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    expect(jsonObject(new Point(1, 2))).toBe(JSON.stringify(new Point(1, 2)));
    const bare = Object.assign(Object.create(null) as object, { a: 'b' });
    expect(jsonObject(bare)).toBe(JSON.stringify(bare));
  });
});

import { nestingDepth } from './json-body-parser';

describe('nestingDepth', () => {
  it('counts the deepest object or array nesting', () => {
    expect(nestingDepth('1')).toBe(0);
    expect(nestingDepth('{"a":1}')).toBe(1);
    expect(nestingDepth('{"a":[{"b":[]}],"c":{}}')).toBe(4);
    expect(nestingDepth('['.repeat(5000) + ']'.repeat(5000))).toBe(5000);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestingDepth('{"a":"[[[{{{"}')).toBe(1);
    expect(nestingDepth('{"a":"say \\"[[[\\" and \\\\","b":[1]}')).toBe(2);
  });
});

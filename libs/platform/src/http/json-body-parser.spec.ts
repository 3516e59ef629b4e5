import { ValidationError } from '../errors/domain-errors';
import { parseJsonBody, nestingDepth } from './json-body-parser';

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

describe('parseJsonBody', () => {
  const parse = (text: string) => {
    let result: { err: Error | null; value?: unknown } = { err: null };
    parseJsonBody(undefined, Buffer.from(text), (err, value) => (result = { err, value }));
    return result;
  };

  it('parses JSON, and takes an empty body for none', () => {
    expect(parse('{"a":[1,2.5,-3e10]}')).toEqual({ err: null, value: { a: [1, 2.5, -3e10] } });
    expect(parse('  ')).toEqual({ err: null, value: undefined });
  });

  it('refuses deep nesting, prototype keys, numbers beyond double range and malformed text, each saying which', () => {
    expect(parse(`${'['.repeat(40)}${']'.repeat(40)}`).err?.message).toMatch(/deeper than 32 levels/);
    expect(parse('{"__proto__":{"admin":true}}').err?.message).toMatch(/__proto__/);
    expect(parse('{"details":{"n":1e400}}').err?.message).toMatch(/number too large/);
    expect(parse('{"a":').err?.message).toMatch(/not valid JSON/);
  });

  it('refuses a body that is not an object, null included, naming the body', () => {
    for (const [text, what] of [
      ['null', 'null'],
      [' null ', 'null'],
      ['[]', 'an array'],
      ['[{"a":1}]', 'an array'],
      ['1', 'a number'],
      ['"x"', 'a string'],
      ['true', 'a boolean'],
    ]) {
      const { err, value } = parse(text);
      expect(value).toBeUndefined();
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).errors).toEqual([
        { field: 'body', message: expect.stringContaining(`not ${what}`) },
      ]);
    }
    expect(parse('{}')).toEqual({ err: null, value: {} });
  });
});

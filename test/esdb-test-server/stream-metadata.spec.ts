/**
 * Stream metadata as EventStoreDB 23.10 reads it: what hides events from stream reads depends on
 * it, so a lenient reading here would let a test pass that fails on the real server.
 */
import { DELETED_STREAM, EMPTY_METADATA, parseStreamMetadata, withTruncateBefore } from './stream-metadata';

const json = (text: string) => parseStreamMetadata(Buffer.from(text, 'utf8'), true);

describe('parseStreamMetadata', () => {
  it('reads the system properties and ignores custom ones', () => {
    expect(
      json(
        '{"$maxCount":5,"$maxAge":60,"$tb":3,"$cacheControl":10,"$tempStream":true,"custom":{"a":[1,2.5]},"$acl":{"$r":"$all","$w":["a","b"]}}',
      ),
    ).toEqual({
      maxCount: 5n,
      maxAgeSeconds: 60n,
      truncateBefore: 3n,
      cacheControlSeconds: 10n,
      tempStream: true,
      acl: { $r: ['$all'], $w: ['a', 'b'] },
    });
  });

  it('keeps integers beyond 2^53 exactly: the soft-delete marker is long.MaxValue', () => {
    expect(json('{"$tb":9223372036854775807}')).toEqual({ truncateBefore: DELETED_STREAM });
  });

  it.each([
    ['a float where an integer belongs', '{"$maxCount":1.0}'],
    ['an exponent', '{"$tb":1e3}'],
    ['an integer beyond int64', '{"$tb":9223372036854775808}'],
    ['a string number', '{"$maxAge":"60"}'],
    ['a non-boolean $tempStream', '{"$tempStream":1}'],
    ['an unknown key inside $acl', '{"$acl":{"$x":"a"}}'],
    ['a role list with a number', '{"$acl":{"$r":["a",1]}}'],
    ['not an object', '[1]'],
    ['broken JSON', '{"$maxCount":'],
  ])('gives up on the whole metadata for %s', (_, text) => {
    expect(json(text)).toBe(EMPTY_METADATA);
  });

  it('drops non-positive limits and a negative $tb one by one', () => {
    expect(json('{"$maxCount":0,"$maxAge":-1,"$tb":-1,"$cacheControl":0,"$tempStream":false}')).toEqual({
      tempStream: false,
    });
  });

  it('ignores binary or empty metadata events', () => {
    expect(parseStreamMetadata(Buffer.from('{"$maxCount":1}'), false)).toBe(EMPTY_METADATA);
    expect(parseStreamMetadata(Buffer.alloc(0), true)).toBe(EMPTY_METADATA);
  });
});

describe('withTruncateBefore (undoing a soft delete)', () => {
  it('replaces $tb in place, keeps the rest, and writes compact JSON', () => {
    const out = withTruncateBefore(
      Buffer.from('{ "$maxAge" : 60, "$tb": 9223372036854775807, "x": { "s": "a b" } }'),
      4n,
    );
    expect(out?.toString()).toBe('{"$maxAge":60,"$tb":4,"x":{"s":"a b"}}');
  });

  it('adds $tb when absent, and refuses what is not a JSON object', () => {
    expect(withTruncateBefore(Buffer.from('{}'), 2n)?.toString()).toBe('{"$tb":2}');
    expect(withTruncateBefore(Buffer.from('"x"'), 2n)).toBeNull();
  });
});

import { PreconditionFailedError, ValidationError } from '../errors/domain-errors';
import { etagOf, parseIfMatch } from './etag';

describe('If-Match', () => {
  it.each([
    ['"3"', 3n],
    ['W/"3"', 3n],
    ['  "0" ', 0n],
    ['"12345"', 12345n],
  ])('%j asks for that version', (header, revision) => {
    expect(parseIfMatch(header)).toBe(revision);
  });

  it('absent or * asks for no particular version', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch('*')).toBeUndefined();
  });

  it.each(['"abc"', '"-1"', '"01"', '""', '"99999999999999999"'])('%j can never match: 412', (header) => {
    expect(() => parseIfMatch(header)).toThrow(PreconditionFailedError);
  });

  it.each(['3', 'W/3', '"3', '"1", "2"', 'w/"3"'])('%j is malformed: 400 naming If-Match', (header) => {
    const err = (() => {
      try {
        parseIfMatch(header);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).errors).toEqual([{ field: 'If-Match', message: expect.any(String) }]);
  });

  it('ETag quotes the version', () => {
    expect(etagOf(4)).toBe('"4"');
    expect(etagOf(4n)).toBe('"4"');
  });
});

import { matchesIfNoneMatch, prepareJson } from './prepared-json';

describe('prepared JSON', () => {
  const prepared = prepareJson([{ levelId: 1 }]);

  it('serialises once, with a strong ETag over the bytes', () => {
    expect(prepared.body.toString('utf8')).toBe('[{"levelId":1}]');
    expect(prepared.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(prepareJson([{ levelId: 1 }]).etag).toBe(prepared.etag);
    expect(prepareJson([{ levelId: 2 }]).etag).not.toBe(prepared.etag);
  });

  it.each([
    [undefined, false],
    ['', false],
    ['"other"', false],
    [prepared.etag, true],
    [`W/${prepared.etag}`, true],
    [`"a", ${prepared.etag} , "b"`, true],
    ['*', true],
  ])('If-None-Match %p matches: %p', (header, expected) => {
    expect(matchesIfNoneMatch(header, prepared.etag)).toBe(expected);
  });
});

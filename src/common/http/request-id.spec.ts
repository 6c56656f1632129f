import { requestIdFor } from './request-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdFor', () => {
  it.each(['abc', 'edge-7f3a.42_x', 'A'.repeat(64), '0b8e5d1c-2f4a-4c1e-9a57-3d2b1f0e6c88'])(
    'keeps the sane id %s',
    (id) => {
      expect(requestIdFor(id)).toBe(id);
    },
  );

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['too long', 'A'.repeat(65)],
    ['with a space', 'a b'],
    ['with a newline', 'a\nb'],
    ['with JSON', '{"a":1}'],
    ['with a slash', 'a/b'],
    ['repeated', ['a', 'b']],
  ])('replaces an id that is %s with a UUID', (_case, header) => {
    expect(requestIdFor(header)).toMatch(UUID);
  });

  it('generates a different id each time', () => {
    expect(requestIdFor(undefined)).not.toBe(requestIdFor(undefined));
  });
});

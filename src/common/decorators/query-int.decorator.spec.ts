import { BadRequestError } from '../errors/app-error';
import { parseQueryInt } from './query-int.decorator';

const limit = { name: 'limit', min: 1, max: 100, default: 10 };

describe('parseQueryInt', () => {
  it('uses the default when the parameter is absent', () => {
    expect(parseQueryInt(undefined, limit)).toBe(10);
    expect(parseQueryInt(undefined, { name: 'before', min: 1, max: 5 })).toBeUndefined();
  });

  it.each([
    ['1', 1],
    ['100', 100],
    ['042', 42],
  ])('parses %j', (raw, value) => {
    expect(parseQueryInt(raw, limit)).toBe(value);
  });

  it.each(['0', '101', 'abc', '1.5', '', ' 5', '-1', '1e1', '0x10', '+5', '99999999999999999', ['1', '2'], { a: '1' }])(
    'refuses %j',
    (raw) => {
      expect(() => parseQueryInt(raw, limit)).toThrow(new BadRequestError('limit must be an integer from 1 to 100'));
    },
  );
});

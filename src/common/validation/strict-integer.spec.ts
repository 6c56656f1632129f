import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { INT4_MAX, INT8_MAX, QueryIntRange, strictBigInteger, strictInteger } from './strict-integer';

const NOT_INTEGERS: unknown[] = [
  '',
  ' 5',
  '5 ',
  '-1',
  '+5',
  '1.5',
  '1.0',
  '1e1',
  '0x10',
  '１',
  'abc',
  ['1', '2'],
  { a: '1' },
  5,
  null,
  undefined,
];

describe('strictInteger', () => {
  it.each([
    ['0', 0, 0],
    ['1', 1, 1],
    ['100', 100, 100],
    ['042', 42, 42],
    [String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  ])('reads %j', (text, max, value) => {
    expect(strictInteger(text, 0, max)).toBe(value);
  });

  it.each(NOT_INTEGERS)('refuses %j', (text) => {
    expect(strictInteger(text, 0, Number.MAX_SAFE_INTEGER)).toBeNull();
  });

  it('refuses a value outside [min, max]', () => {
    expect(strictInteger('0', 1, 100)).toBeNull();
    expect(strictInteger('101', 1, 100)).toBeNull();
    expect(strictInteger('100', 1, 100)).toBe(100);
  });

  it('refuses more digits than maxDigits (16 by default), leading zeros included', () => {
    expect(strictInteger('99999999999999999', 0, Number.MAX_SAFE_INTEGER)).toBeNull();
    expect(strictInteger('0000000000000001', 0, 1)).toBe(1);
    expect(strictInteger('00000000000000001', 0, 1)).toBeNull();
    expect(strictInteger('0000000001', 1, INT4_MAX, 10)).toBe(1);
    expect(strictInteger('00000000001', 1, INT4_MAX, 10)).toBeNull();
    expect(strictInteger(String(INT4_MAX), 1, INT4_MAX, 10)).toBe(INT4_MAX);
    expect(strictInteger(String(INT4_MAX + 1), 1, INT4_MAX, 10)).toBeNull();
  });

  it('refuses 16 digits that are not a safe integer', () => {
    expect(strictInteger('9007199254740992', 0, Number.MAX_SAFE_INTEGER * 2)).toBeNull();
  });
});

describe('strictBigInteger', () => {
  it('reads up to 19 digits as a bigint, from min to max', () => {
    expect(strictBigInteger(INT8_MAX.toString(), 1n, INT8_MAX)).toBe(INT8_MAX);
    expect(strictBigInteger('0042', 1n, INT8_MAX)).toBe(42n);
    expect(strictBigInteger((INT8_MAX + 1n).toString(), 1n, INT8_MAX)).toBeNull();
    expect(strictBigInteger('0', 1n, INT8_MAX)).toBeNull();
    expect(strictBigInteger('0'.repeat(19) + '1', 1n, INT8_MAX)).toBeNull();
  });

  it.each(NOT_INTEGERS)('refuses %j', (text) => {
    expect(strictBigInteger(text, 0n, INT8_MAX)).toBeNull();
  });
});

class Query {
  @QueryIntRange('limit', 1, 100)
  limit?: number;
}

const validate = (limit: unknown) => {
  const query = plainToInstance(Query, limit === undefined ? {} : { limit });
  return { limit: query.limit, errors: validateSync(query).flatMap((e) => Object.values(e.constraints ?? {})) };
};

describe('QueryIntRange', () => {
  it('turns digits into the number and leaves an absent value absent', () => {
    expect(validate('042')).toEqual({ limit: 42, errors: [] });
    expect(validate(undefined)).toEqual({ limit: undefined, errors: [] });
  });

  it.each(['0', '101', '', '1.5', '1e1', ' 5', '0x10', '99999999999999999', ['1', '2']])(
    'refuses %j naming the range',
    (limit) => {
      expect(new Set(validate(limit).errors)).toEqual(new Set(['limit must be an integer from 1 to 100']));
    },
  );
});

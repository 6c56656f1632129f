import * as fc from 'fast-check';
import { MAX_RANGE_HEADER_LENGTH, parseByteRange } from './byte-range';

describe('parseByteRange', () => {
  it.each([
    [undefined, 100, { kind: 'full' }],
    ['bytes=0-9', 100, { kind: 'partial', start: 0, end: 9 }],
    ['bytes=10-', 100, { kind: 'partial', start: 10, end: 99 }],
    ['bytes=-10', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-1000', 100, { kind: 'partial', start: 0, end: 99 }],
    ['bytes=90-1000', 100, { kind: 'partial', start: 90, end: 99 }],
    ['Bytes = 5 - 6', 100, { kind: 'partial', start: 5, end: 6 }],
    [' BYTES\t=\t5\t-\t6 ', 100, { kind: 'partial', start: 5, end: 6 }],
    ['bytes=99-99', 100, { kind: 'partial', start: 99, end: 99 }],
    ['bytes=0005-0006', 100, { kind: 'partial', start: 5, end: 6 }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=100-200', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
    ['bytes=-5', 0, { kind: 'unsatisfiable' }],
    ['bytes=99999999999999999999-', 100, { kind: 'unsatisfiable' }],
    // Ignored: the whole file is sent.
    ['bytes=9-5', 100, { kind: 'full' }],
    ['bytes=0-1,5-6', 100, { kind: 'full' }],
    ['bytes=0-1-2', 100, { kind: 'full' }],
    ['bytes==0-1', 100, { kind: 'full' }],
    ['bytes=-', 100, { kind: 'full' }],
    ['bytes=', 100, { kind: 'full' }],
    ['bytes', 100, { kind: 'full' }],
    ['items=0-5', 100, { kind: 'full' }],
    ['bytes=a-b', 100, { kind: 'full' }],
    ['bytes=+1-2', 100, { kind: 'full' }],
    ['bytes=0x1-2', 100, { kind: 'full' }],
    ['', 100, { kind: 'full' }],
  ])('%j of %d bytes is %j', (header, size, expected) => {
    expect(parseByteRange(header, size)).toEqual(expected);
  });

  it(`ignores a header over ${MAX_RANGE_HEADER_LENGTH} characters, however well-formed`, () => {
    const padded = (length: number) => `bytes=${' '.repeat(length - 'bytes=0-1'.length)}0-1`;
    expect(parseByteRange(padded(MAX_RANGE_HEADER_LENGTH), 100)).toEqual({ kind: 'partial', start: 0, end: 1 });
    expect(parseByteRange(padded(MAX_RANGE_HEADER_LENGTH + 1), 100)).toEqual({ kind: 'full' });
    expect(parseByteRange(`bytes=${'\t'.repeat(15_500)}!`, 100)).toEqual({ kind: 'full' });
  });

  it('reads every header within the cap as the one regular expression it replaces did', () => {
    // The former parser, kept as the oracle; it is quadratic, harmless on these short strings.
    // eslint-disable-next-line regexp/no-super-linear-backtracking
    const former = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i;
    const reference = (header: string, size: number) => {
      const match = former.exec(header);
      if (!match) return { kind: 'full' };
      const [, first, last] = match;
      if (first === '' && last === '') return { kind: 'full' };
      if (first === '') {
        const length = Number(last);
        if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
        return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
      }
      const start = Number(first);
      const end = last === '' ? size - 1 : Number(last);
      if (last !== '' && end < start) return { kind: 'full' };
      if (start >= size) return { kind: 'unsatisfiable' };
      return { kind: 'partial', start, end: Math.min(end, size - 1) };
    };
    // Headers built from the pieces a range is made of, so most are near-misses of a valid one.
    const piece = fc.constantFrom(
      'bytes',
      'BYTES',
      'Bytes',
      'items',
      '=',
      '-',
      ',',
      ' ',
      '\t',
      '\u00a0',
      '\ufeff',
      '0',
      '7',
      '42',
      '100',
      '99999999999999999999',
      'a',
      '+',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join('')),
        fc.integer({ min: 0, max: 200 }),
        (header, size) => {
          expect(parseByteRange(header, size)).toEqual(reference(header, size));
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

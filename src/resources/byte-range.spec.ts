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
    // The former parser's regex, kept as the oracle; it is quadratic, harmless on these short strings.
    // eslint-disable-next-line regexp/no-super-linear-backtracking
    const former = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i;
    // Headers shaped like a range, each part drawn from valid and near-miss forms, and free
    // sequences of the same pieces.
    const space = fc.constantFrom('', ' ', '\t', ' \t ', '\u00a0', '\ufeff', '\u2028', '\v');
    const unit = fc.constantFrom('bytes', 'BYTES', 'Bytes', 'byte', 'items', '');
    const equals = fc.constantFrom('=', '', '==');
    const number = fc.constantFrom('', '0', '7', '42', '100', '0042', '99999999999999999999', 'a', '+1', '1,2', '٣');
    const dash = fc.constantFrom('-', '', '--', ',');
    const shaped = fc
      .tuple(space, unit, space, equals, space, number, space, dash, space, number, space)
      .map((parts) => parts.join(''));
    const piece = fc.constantFrom('bytes', '=', '-', ',', ' ', '\t', '\u00a0', '0', '42', '100', 'a');
    const header = fc.oneof(shaped, fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join('')));
    fc.assert(
      fc.property(
        header,
        fc.integer({ min: 0, max: 200 }),
        (header, size) => {
          // What the former parser read from it, put in canonical form (the table above covers that form).
          const match = former.exec(header);
          const expected = match ? parseByteRange(`bytes=${match[1]}-${match[2]}`, size) : { kind: 'full' };
          expect(parseByteRange(header, size)).toEqual(expected);
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

import { parseByteRange } from './byte-range';

describe('parseByteRange', () => {
  it.each([
    [undefined, 100, { kind: 'full' }],
    ['bytes=0-9', 100, { kind: 'partial', start: 0, end: 9 }],
    ['bytes=10-', 100, { kind: 'partial', start: 10, end: 99 }],
    ['bytes=-10', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-1000', 100, { kind: 'partial', start: 0, end: 99 }],
    ['bytes=90-1000', 100, { kind: 'partial', start: 90, end: 99 }],
    ['Bytes = 5 - 6', 100, { kind: 'partial', start: 5, end: 6 }],
    ['bytes=99-99', 100, { kind: 'partial', start: 99, end: 99 }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=100-200', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-', 0, { kind: 'unsatisfiable' }],
    ['bytes=-5', 0, { kind: 'unsatisfiable' }],
    // Ignored: the whole file is sent.
    ['bytes=9-5', 100, { kind: 'full' }],
    ['bytes=0-1,5-6', 100, { kind: 'full' }],
    ['bytes=-', 100, { kind: 'full' }],
    ['items=0-5', 100, { kind: 'full' }],
    ['bytes=a-b', 100, { kind: 'full' }],
    ['', 100, { kind: 'full' }],
  ])('%j of %d bytes is %j', (header, size, expected) => {
    expect(parseByteRange(header, size)).toEqual(expected);
  });
});

/** What a `Range` request header asks of a file of `size` bytes (RFC 9110 §14). */
export type RangeRequest =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

/**
 * Longer `Range` headers are ignored (the whole file is sent). One range of a file below 2^53 bytes
 * is at most 6 + 16 + 1 + 16 characters; the rest of the allowance is whitespace a client might add.
 */
export const MAX_RANGE_HEADER_LENGTH = 256;

const DIGITS = /^\d*$/;

/**
 * One `bytes=` range is honoured; a header that is absent, malformed, in another unit, asks for
 * several ranges or is over MAX_RANGE_HEADER_LENGTH is ignored and the whole file is sent, as RFC
 * 9110 allows. Whitespace is allowed around `bytes`, `=` and `-` (what `String#trim` removes).
 *
 * Linear in the header's length, on purpose without one regular expression for the whole header:
 * `\s*(\d*)\s*` lets two whitespace runs trade characters when the digits are absent, and a header
 * of 15,500 tabs held the event loop for 0.2 s (docs/decisions.md "Resources").
 */
export function parseByteRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined || header.length > MAX_RANGE_HEADER_LENGTH) return { kind: 'full' };
  const equals = header.indexOf('=');
  if (equals === -1 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return { kind: 'full' };
  const spec = header.slice(equals + 1);
  const dash = spec.indexOf('-');
  if (dash === -1) return { kind: 'full' };
  const first = spec.slice(0, dash).trim();
  const last = spec.slice(dash + 1).trim();
  if (!DIGITS.test(first) || !DIGITS.test(last)) return { kind: 'full' };
  if (first === '' && last === '') return { kind: 'full' };
  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

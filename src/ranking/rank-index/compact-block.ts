/**
 * The bit-packed block format of CompactKeySet (compact-key-set.ts describes the set): a block is a
 * Uint32Array of HEADER words (each field's smallest value, the fields' widths, the first field's
 * step) then its keys, each field stored as its offset from the smallest value in as many bits as
 * the block's largest offset needs. Here: measuring and packing keys, reading and writing fields
 * at a bit position, moving bits, and the buffer sizes. No state but the scratch arrays' shape.
 */
/** A whole block's buffer: 4 KiB. */
export const FULL_WORDS = 1024;
/** Words a loaded block is packed to: the rest (32 words, at least ten keys) is room for inserts in place. */
export const LOAD_WORDS = FULL_WORDS - 32;
/** Keys in a block at most, however few bits they take (a repack handles the whole block). */
export const MAX_KEYS = 1024;
/** Keys a loaded block holds at most (room for 16 inserts when the keys take few bits). */
export const LOAD_KEYS = MAX_KEYS - 16;
/**
 * Header words: the smallest value of each field (the 44-bit one in two words), the fields'
 * widths, and the step of the first field's values (their offsets' greatest common divisor).
 */
export const HEADER = 6;
export const HEADER_BITS = HEADER * 32;
export const MIN_GROWTH = 16;
export const TWO_32 = 2 ** 32;

/** Words of the buffer for a block that needs `words` (the class comment's sizes). */
export function bufferWords(words: number): number {
  return words >= FULL_WORDS >>> 1 ? FULL_WORDS : Math.min(FULL_WORDS, words + Math.max(MIN_GROWTH, words >>> 3));
}

/** The same on a key's fields (f0, f1, f2): the order is the same, the fields being the words' bits cut elsewhere. */
export type FieldQuery = (f0: number, f1: number, f2: number) => boolean;

/** Keys unpacked into fields: the working space of a change (two: a block and its neighbour). */
export class Scratch {
  readonly f0 = new Float64Array(MAX_KEYS + 1);
  readonly f1 = new Float64Array(MAX_KEYS + 1);
  readonly f2 = new Float64Array(MAX_KEYS + 1);
}

/** How keys from..to − 1 of a scratch pack: each field's smallest value and width, the words it takes. */
export interface Packing {
  from: number;
  to: number;
  step0: number;
  min0: number;
  min1: number;
  min2: number;
  b0: number;
  b1: number;
  b2: number;
  words: number;
}

/** The query "stored key < (f0, f1, f2)". */
export function belowFields(q0: number, q1: number, q2: number): FieldQuery {
  return (f0, f1, f2) => (f0 !== q0 ? f0 < q0 : f1 !== q1 ? f1 < q1 : f2 < q2);
}

/** The first field: the top 20 bits of w0. */
export const field0 = (w0: number) => w0 >>> 12;
/** The second field: the low 12 bits of w0, then w1 (44 bits). */
export const field1 = (w0: number, w1: number) => (w0 & 0xfff) * TWO_32 + w1;
export const word0 = (f0: number, f1: number) => f0 * 4096 + Math.floor(f1 / TWO_32);
export const word1 = (f1: number) => f1 % TWO_32;

/** Bits needed for values 0 … range (range < 2^53). */
export function bitLength(range: number): number {
  if (range < TWO_32) return 32 - Math.clz32(range);
  return 64 - Math.clz32(Math.floor(range / TWO_32));
}

/** Words of a block of `count` keys of `bits` bits each, header included. */
export const wordsFor = (count: number, bits: number) => HEADER + Math.ceil((count * bits) / 32);

/** Whether a packing fits a whole buffer (a block's own, or a small one grown). */
export const fits = (packing: Packing) => packing.to - packing.from <= MAX_KEYS && packing.words <= FULL_WORDS;

export function measure(keys: Scratch, from: number, to: number): Packing {
  let min0 = keys.f0[from];
  let max0 = min0;
  let min1 = keys.f1[from];
  let max1 = min1;
  let min2 = keys.f2[from];
  let max2 = min2;
  for (let i = from + 1; i < to; i++) {
    const f0 = keys.f0[i];
    const f1 = keys.f1[i];
    const f2 = keys.f2[i];
    if (f0 < min0) min0 = f0;
    else if (f0 > max0) max0 = f0;
    if (f1 < min1) min1 = f1;
    else if (f1 > max1) max1 = f1;
    if (f2 < min2) min2 = f2;
    else if (f2 > max2) max2 = f2;
  }
  // The first field's offsets share a step when the scores do (a two-decimal acc: 100 ten-thousandths).
  let step0 = 0;
  for (let i = from; i < to && step0 !== 1; i++) step0 = gcd(step0, keys.f0[i] - min0);
  if (step0 === 0) step0 = 1;
  const b0 = bitLength((max0 - min0) / step0);
  const b1 = bitLength(max1 - min1);
  const b2 = bitLength(max2 - min2);
  return { from, to, step0, min0, min1, min2, b0, b1, b2, words: wordsFor(to - from, b0 + b1 + b2) };
}

export function gcd(a: number, b: number): number {
  while (b !== 0) {
    const rest = a % b;
    a = b;
    b = rest;
  }
  return a;
}

/** Writes the header and keys[from … to − 1] into `data` (which has packing.words words at least; the bits after them are left as they were). */
export function pack(data: Uint32Array, keys: Scratch, packing: Packing): void {
  const { from, to, step0, min0, min1, min2, b0, b1, b2 } = packing;
  data[0] = min0;
  data[1] = min1 % TWO_32;
  data[2] = Math.floor(min1 / TWO_32);
  data[3] = min2;
  data[4] = b0 | (b1 << 8) | (b2 << 16);
  data[5] = step0;
  const bits = b0 + b1 + b2;
  for (let i = from, at = HEADER_BITS; i < to; i++, at += bits) {
    setField(data, at, b0, (keys.f0[i] - min0) / step0);
    setField(data, at + b0, b1, keys.f1[i] - min1);
    setField(data, at + b0 + b1, b2, keys.f2[i] - min2);
  }
}

/** Key i's fields (a reused array: read it before the next call). */
export function fieldsAt(data: Uint32Array, i: number): Float64Array {
  const { min0, step0, min1, min2, b0, b1, b2, at } = position(data, i);
  FIELDS[0] = min0 + readField(data, at, b0) * step0;
  FIELDS[1] = min1 + readField(data, at + b0, b1);
  FIELDS[2] = min2 + readField(data, at + b0 + b1, b2);
  return FIELDS;
}
export const FIELDS = new Float64Array(3);

/** Whether a key's fields are within a block's packing: at or above its smallest values, on the step, within the widths. */
export function fitsPacking(data: Uint32Array, f0: number, f1: number, f2: number): boolean {
  const { min0, step0, min1, min2, b0, b1, b2 } = readHeader(data);
  const d0 = (f0 - min0) / step0;
  const d1 = f1 - min1;
  const d2 = f2 - min2;
  return Number.isInteger(d0) && d0 >= 0 && d0 < 2 ** b0 && d1 >= 0 && d1 < 2 ** b1 && d2 >= 0 && d2 < 2 ** b2;
}

/** A block's header: each field's smallest value, the first field's step, the fields' widths and a key's bits. */
export interface Header {
  min0: number;
  step0: number;
  min1: number;
  min2: number;
  b0: number;
  b1: number;
  b2: number;
  bits: number;
}

export function readHeader(data: Uint32Array): Header {
  const widths = data[4];
  const b0 = widths & 0xff;
  const b1 = (widths >>> 8) & 0xff;
  const b2 = widths >>> 16;
  return {
    min0: data[0],
    step0: data[5],
    min1: data[1] + data[2] * TWO_32,
    min2: data[3],
    b0,
    b1,
    b2,
    bits: b0 + b1 + b2,
  };
}

/** Key i's bit position in a block, with the block's header. */
export function position(data: Uint32Array, i: number): Header & { at: number } {
  const header = readHeader(data);
  return { ...header, at: HEADER_BITS + i * header.bits };
}

/** Reads `width` (0 … 44) bits at bit `at`. */
export function readField(data: Uint32Array, at: number, width: number): number {
  if (width <= 32) return readBits(data, at, width);
  return readBits(data, at, 32) + readBits(data, at + 32, width - 32) * TWO_32;
}

/** Reads `width` (0 … 32) bits at bit `at`, least significant first. */
export function readBits(data: Uint32Array, at: number, width: number): number {
  if (width === 0) return 0;
  const word = at >>> 5;
  const shift = at & 31;
  let value = data[word] >>> shift;
  if (shift + width > 32) value = (value | (data[word + 1] << (32 - shift))) >>> 0;
  return width === 32 ? value : value & ((1 << width) - 1);
}

/** Writes `value` (0 … 2^width − 1, width 0 … 44) at bit `at`, whatever its bits were. */
export function setField(data: Uint32Array, at: number, width: number, value: number): void {
  if (width <= 32) setBits(data, at, width, value);
  else {
    const high = Math.floor(value / TWO_32);
    setBits(data, at, 32, value - high * TWO_32);
    setBits(data, at + 32, width - 32, high);
  }
}

/** Writes `value` (0 … 2^width − 1, width 0 … 32) at bit `at`, whatever its bits were. */
export function setBits(data: Uint32Array, at: number, width: number, value: number): void {
  if (width === 0) return;
  const word = at >>> 5;
  const shift = at & 31;
  const low = Math.min(width, 32 - shift);
  const lowMask = (low === 32 ? -1 : (1 << low) - 1) << shift;
  data[word] = (data[word] & ~lowMask) | ((value << shift) & lowMask);
  if (low < width) {
    const highMask = (1 << (width - low)) - 1;
    data[word + 1] = (data[word + 1] & ~highMask) | ((value >>> low) & highMask);
  }
}

/**
 * Copies `length` bits from bit `from` to bit `to` (the ranges may overlap): how a key goes in or
 * out of a block without unpacking it. Whole destination words are copied with a funnel shift,
 * the partial ones at either end bit-masked; the copy runs away from the side it writes to.
 * (Exported for its unit test.)
 */
export function moveBits(data: Uint32Array, from: number, to: number, length: number): void {
  if (length <= 0 || from === to) return;
  const end = to + length;
  const firstWord = (to + 31) >>> 5;
  const endWord = end >>> 5;
  const delta = from - to;
  if (endWord <= firstWord) {
    // Within one or two words: bit-masked, in the safe order.
    const head = Math.min(length, firstWord * 32 - to);
    const copy = (at: number, width: number) => setBits(data, at, width, readBits(data, at + delta, width));
    if (delta > 0) {
      copy(to, head);
      if (length > head) copy(to + head, length - head);
    } else {
      if (length > head) copy(to + head, length - head);
      copy(to, head);
    }
    return;
  }
  const headBits = firstWord * 32 - to;
  const tailBits = end - endWord * 32;
  if (delta > 0) {
    if (headBits > 0) setBits(data, to, headBits, readBits(data, from, headBits));
    for (let k = firstWord; k < endWord; k++) data[k] = wordAt(data, k * 32 + delta);
    if (tailBits > 0) setBits(data, endWord * 32, tailBits, readBits(data, endWord * 32 + delta, tailBits));
  } else {
    if (tailBits > 0) setBits(data, endWord * 32, tailBits, readBits(data, endWord * 32 + delta, tailBits));
    for (let k = endWord - 1; k >= firstWord; k--) data[k] = wordAt(data, k * 32 + delta);
    if (headBits > 0) setBits(data, to, headBits, readBits(data, from, headBits));
  }
}

/** The 32 bits at bit `at`. */
export function wordAt(data: Uint32Array, at: number): number {
  const word = at >>> 5;
  const shift = at & 31;
  return shift === 0 ? data[word] : (data[word] >>> shift) | (data[word + 1] << (32 - shift));
}

import { BlockFenwick } from './block-fenwick';

/**
 * A set of keys of three unsigned 32-bit words (compared lexicographically) that answers "how many
 * keys are below this one" in O(log n): the storage of the in-process rank index, about 7–8 bytes
 * a key on the network's data (12 bytes unpacked).
 *
 * Layout: sorted blocks, each a Uint32Array holding a small header and its keys bit-packed, plus a
 * Fenwick tree over the block sizes. A key's 96 bits are cut into three fields, 20 + 44 + 32 bits
 * (for a chart key: the acc, the time it was first reached, the uid; for a site key: nothing, the
 * inverted ATP, the uid). A block stores each field as its offset from the block's smallest value
 * of that field, in as many bits as the block's largest offset needs; the first field's offsets
 * are divided by their common step (a two-decimal acc moves in steps of 100 ten-thousandths). A
 * block's keys are close in the first field and spread in the other two, so a chart key of the
 * network's data takes ~60 bits where the words take 96 (docs/benchmarks-archive.md, "Bit-packed rank
 * index"). Key i of a block is at a fixed bit position, so a lookup binary-searches the block
 * ends, then inside the block, as with unpacked words.
 *
 * A key that fits the block's packing (its fields within the block's ranges and step) goes in
 * where the block has room by moving the keys after it up by one key's bits; a delete moves them
 * down (moveBits, a word at a time). Otherwise the block is unpacked into scratch arrays, changed
 * and packed again (at most MAX_KEYS keys, microseconds). A block that no longer fits its buffer
 * (more keys, or a key that widens a field) first hands a key to a neighbour with room, as a
 * B*-tree does (to the previous block in place when its packing takes the key: a packing has
 * room above its largest values, none below its smallest); only when neither can take it does
 * it split. An emptied block is dropped. A split or a drop rebuilds the Fenwick tree
 * (O(n / block size)). Loading appends sorted keys (CompactKeySetBuilder) into blocks packed to
 * LOAD_WORDS of a whole buffer, the rest being room for inserts in place; a snapshot stores the
 * blocks as they are (packedBlocks, fromPacked), or packed afresh at shutdown (repacked).
 *
 * Buffers: a block that needs at least half of a whole buffer (FULL_WORDS, 4 KiB, the same for all
 * of them) has one; a smaller one (a small chart's, a set's last) a buffer close to its need that
 * grows by an eighth. So a big block is never reallocated: growing into a new buffer would leave
 * the old one free, of a size malloc cannot give to the next block that grows, and a day of
 * uploads stranded ~50 MiB that way (docs/benchmarks-archive.md, "Rank index memory under uploads").
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
const HEADER_BITS = HEADER * 32;
const MIN_GROWTH = 16;
const TWO_32 = 2 ** 32;

/** Words of the buffer for a block that needs `words` (the class comment's sizes). */
export function bufferWords(words: number): number {
  return words >= FULL_WORDS >>> 1 ? FULL_WORDS : Math.min(FULL_WORDS, words + Math.max(MIN_GROWTH, words >>> 3));
}

/** Whether the stored key (w0, w1, w2) is below the key searched for. */
export type WordQuery = (w0: number, w1: number, w2: number) => boolean;
/** The same on a key's fields (f0, f1, f2): the order is the same, the fields being the words' bits cut elsewhere. */
type FieldQuery = (f0: number, f1: number, f2: number) => boolean;

export type WordKey = [number, number, number];

/** Keys unpacked into fields: the working space of a change (two: a block and its neighbour). */
class Scratch {
  readonly f0 = new Float64Array(MAX_KEYS + 1);
  readonly f1 = new Float64Array(MAX_KEYS + 1);
  readonly f2 = new Float64Array(MAX_KEYS + 1);
}
const BLOCK = new Scratch();
const NEIGHBOUR = new Scratch();

/** How keys from..to − 1 of a scratch pack: each field's smallest value and width, the words it takes. */
interface Packing {
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

export class CompactKeySet {
  private blocks: Uint32Array[] = [];
  private counts: number[] = [];
  /** Fenwick tree over `counts`. */
  private readonly tree = new BlockFenwick();
  private total = 0;

  /**
   * A set over blocks as packedBlocks gave them (a snapshot read back): each a buffer holding the
   * block's words and `counts[i]` keys. Throws on a block its header cannot hold (a damaged file).
   */
  static fromPacked(blocks: Uint32Array[], counts: number[]): CompactKeySet {
    blocks.forEach((data, i) => {
      const count = counts[i];
      const { b0, b1, b2, bits } = position(data, 0);
      const valid =
        Number.isInteger(count) &&
        count > 0 &&
        count <= MAX_KEYS &&
        data.length <= FULL_WORDS &&
        b0 <= 20 &&
        b1 <= 44 &&
        b2 <= 32 &&
        data[5] >= 1 &&
        wordsFor(count, bits) <= data.length;
      if (!valid) throw new Error(`a damaged block: ${count} keys in ${data.length} words, widths ${b0}/${b1}/${b2}`);
    });
    return CompactKeySet.fromBlocks(blocks, counts);
  }

  /** A set over packed blocks (the builder). */
  static fromBlocks(blocks: Uint32Array[], counts: number[]): CompactKeySet {
    const set = new CompactKeySet();
    set.blocks = blocks;
    set.counts = counts;
    for (const count of counts) set.total += count;
    set.tree.rebuild(counts);
    return set;
  }

  get size(): number {
    return this.total;
  }

  /** Bytes held by the key blocks (their capacity, used or not). */
  get bytes(): number {
    let bytes = 0;
    for (const block of this.blocks) bytes += block.byteLength;
    return bytes;
  }

  /** Keys below (w0, w1, w2). */
  countBelow(w0: number, w1: number, w2: number): number {
    return this.countFields(belowFields(field0(w0), field1(w0, w1), w2));
  }

  /** Keys below a key given by its order only (`below` must be true for a prefix of the keys). */
  countWhere(below: WordQuery): number {
    return this.countFields((f0, f1, f2) => below(word0(f0, f1), word1(f1), f2));
  }

  has(w0: number, w1: number, w2: number): boolean {
    const f0 = field0(w0);
    const f1 = field1(w0, w1);
    const below = belowFields(f0, f1, w2);
    const block = this.blockFor(below);
    if (block < 0) return false;
    const pos = this.lowerBound(block, below);
    return pos < this.counts[block] && this.equalsAt(block, pos, f0, f1, w2);
  }

  /** Adds the key; false when it was there already. */
  insert(w0: number, w1: number, w2: number): boolean {
    if (this.blocks.length === 0) {
      this.blocks.push(new Uint32Array(bufferWords(HEADER)));
      this.counts.push(0);
      this.tree.rebuild(this.counts);
    }
    const f0 = field0(w0);
    const f1 = field1(w0, w1);
    const below = belowFields(f0, f1, w2);
    let block = this.blockFor(below);
    if (block < 0) block = this.blocks.length - 1;
    const count = this.counts[block];
    const pos = this.lowerBound(block, below);
    if (pos < count && this.equalsAt(block, pos, f0, f1, w2)) return false;
    this.total++;
    if (this.insertInPlace(block, pos, f0, f1, w2) || this.insertAfterHandingBack(block, pos, f0, f1, w2)) return true;
    const keys = BLOCK;
    this.unpack(block, keys, 0);
    keys.f0.copyWithin(pos + 1, pos, count);
    keys.f1.copyWithin(pos + 1, pos, count);
    keys.f2.copyWithin(pos + 1, pos, count);
    keys.f0[pos] = f0;
    keys.f1[pos] = f1;
    keys.f2[pos] = w2;
    this.store(block, keys, count + 1);
    return true;
  }

  /** Removes the key; false when it was not there. */
  delete(w0: number, w1: number, w2: number): boolean {
    const f0 = field0(w0);
    const f1 = field1(w0, w1);
    const below = belowFields(f0, f1, w2);
    const block = this.blockFor(below);
    if (block < 0) return false;
    const count = this.counts[block];
    const pos = this.lowerBound(block, below);
    if (pos >= count || !this.equalsAt(block, pos, f0, f1, w2)) return false;
    // The keys after it move down by one key's bits; the header still holds for the keys left.
    const data = this.blocks[block];
    const { bits, at } = position(data, pos);
    moveBits(data, at + bits, at, (count - 1 - pos) * bits);
    this.counts[block] = count - 1;
    this.total--;
    if (count - 1 === 0 && this.blocks.length > 1) {
      this.blocks.splice(block, 1);
      this.counts.splice(block, 1);
      this.tree.rebuild(this.counts);
    } else {
      this.tree.add(block, -1);
    }
    return true;
  }

  /**
   * Removes every key whose third word (the uid) passes `drop`, in one pass over the blocks
   * (how a snapshot forgets the players that changed after it). Returns how many went.
   */
  removeWhereThird(drop: (w2: number) => boolean): number {
    let removed = 0;
    for (let block = 0; block < this.blocks.length; block++) {
      // Reads only the uids; each run of kept keys moves down over the dropped ones before it.
      const data = this.blocks[block];
      const count = this.counts[block];
      const { b0, b1, b2, bits } = position(data, 0);
      const min2 = data[3];
      let kept = 0;
      let run = 0;
      for (let i = 0; i <= count; i++) {
        if (i < count && !drop(min2 + readField(data, HEADER_BITS + i * bits + b0 + b1, b2))) continue;
        const length = i - run;
        if (length > 0 && kept !== run)
          moveBits(data, HEADER_BITS + run * bits, HEADER_BITS + kept * bits, length * bits);
        kept += length;
        run = i + 1;
      }
      removed += count - kept;
      this.counts[block] = kept;
    }
    if (removed > 0) {
      const blocks: Uint32Array[] = [];
      const counts: number[] = [];
      for (let block = 0; block < this.blocks.length; block++) {
        if (this.counts[block] === 0) continue;
        blocks.push(this.blocks[block]);
        counts.push(this.counts[block]);
      }
      this.blocks = blocks;
      this.counts = counts;
      this.total -= removed;
      this.tree.rebuild(this.counts);
    }
    return removed;
  }

  /** The keys at positions start … end − 1 (clamped to the set), in order. */
  slice(start: number, end: number): WordKey[] {
    const from = Math.max(0, Math.floor(start));
    const to = Math.min(this.total, Math.floor(end));
    const keys: WordKey[] = [];
    if (from >= to) return keys;
    let [block, offset] = this.tree.locate(from);
    for (let left = to - from; left > 0; block++, offset = 0) {
      const stop = Math.min(this.counts[block], offset + left);
      for (let i = offset; i < stop; i++) keys.push(this.keyAt(block, i));
      left -= stop - offset;
    }
    return keys;
  }

  /**
   * Every block as it is in memory (its header and packed keys, not the room after them) with its
   * key count, in order (snapshot writing; valid until the next change).
   */
  *packedBlocks(): IterableIterator<[count: number, words: Uint32Array]> {
    for (let block = 0; block < this.blocks.length; block++) {
      const count = this.counts[block];
      if (count === 0) continue;
      const data = this.blocks[block];
      yield [count, data.subarray(0, wordsFor(count, position(data, 0).bits))];
    }
  }

  /**
   * The same keys packed afresh, as a load packs them (blocks filled to LOAD_WORDS): new keys
   * split blocks, which settle ~80 % full, and a snapshot written from this set gives the next
   * start the loaded density back (docs/decisions.md "Bit-packed blocks"). This set is unchanged.
   */
  repacked(): CompactKeySet {
    const builder = new CompactKeySetBuilder();
    for (let block = 0; block < this.blocks.length; block++)
      for (let i = 0; i < this.counts[block]; i++) builder.append(...this.keyAt(block, i));
    return builder.finish();
  }

  /** Every key in order (tests and diagnostics). */
  *keys(): IterableIterator<WordKey> {
    for (let block = 0; block < this.blocks.length; block++) {
      for (let i = 0; i < this.counts[block]; i++) yield this.keyAt(block, i);
    }
  }

  /** Keys per block, in order (tests and diagnostics). */
  blockCounts(): number[] {
    return [...this.counts];
  }

  /** The blocks' buffers, in order (tests: which ones a change kept). */
  buffers(): ArrayBufferLike[] {
    return this.blocks.map((block) => block.buffer);
  }

  private countFields(below: FieldQuery): number {
    const block = this.blockFor(below);
    if (block < 0) return this.total;
    return this.tree.prefix(block) + this.lowerBound(block, below);
  }

  /** The first block whose last key is not below the query, or -1 when every key is below it. */
  private blockFor(below: FieldQuery): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const count = this.counts[mid];
      if (count === 0 || this.belowAt(mid, count - 1, below)) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.blocks.length ? lo : -1;
  }

  /** Position of the first key of the block that is not below the query. */
  private lowerBound(block: number, below: FieldQuery): number {
    const data = this.blocks[block];
    const { min0, step0, min1, min2, b0, b1, b2, bits } = readHeader(data);
    let lo = 0;
    let hi = this.counts[block];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = HEADER_BITS + mid * bits;
      const f0 = min0 + readField(data, at, b0) * step0;
      const f1 = min1 + readField(data, at + b0, b1);
      const f2 = min2 + readField(data, at + b0 + b1, b2);
      if (below(f0, f1, f2)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private belowAt(block: number, i: number, below: FieldQuery): boolean {
    const key = fieldsAt(this.blocks[block], i);
    return below(key[0], key[1], key[2]);
  }

  private equalsAt(block: number, i: number, f0: number, f1: number, f2: number): boolean {
    const key = fieldsAt(this.blocks[block], i);
    return key[0] === f0 && key[1] === f1 && key[2] === f2;
  }

  private keyAt(block: number, i: number): WordKey {
    const [f0, f1, f2] = fieldsAt(this.blocks[block], i);
    return [word0(f0, f1), word1(f1), f2];
  }

  /**
   * Inserts the key at `pos` without repacking when its fields fit the block's packing and the
   * buffer has room for one more: the keys from `pos` on move up by one key's bits (the count and
   * the tree follow). False otherwise, nothing changed.
   */
  private insertInPlace(block: number, pos: number, f0: number, f1: number, f2: number): boolean {
    const data = this.blocks[block];
    const count = this.counts[block];
    if (count === 0 || count === MAX_KEYS) return false;
    const { b0, b1, b2, bits, at } = position(data, pos);
    if (wordsFor(count + 1, bits) > data.length) return false;
    if (!fitsPacking(data, f0, f1, f2)) return false;
    moveBits(data, at, at + bits, (count - pos) * bits);
    setField(data, at, b0, (f0 - data[0]) / data[5]);
    setField(data, at + b0, b1, f1 - (data[1] + data[2] * TWO_32));
    setField(data, at + b0 + b1, b2, f2 - data[3]);
    this.counts[block] = count + 1;
    this.tree.add(block, 1);
    return true;
  }

  /**
   * A full block's cheap way out, without repacking: its first key (or the new key, when it sorts
   * first) goes to the end of the previous block when that one's packing takes it in place (a
   * packing has room above its largest values, never below its smallest, so the next block rarely
   * could), then the new key goes in. False when it cannot (the caller repacks), nothing changed.
   */
  private insertAfterHandingBack(block: number, pos: number, f0: number, f1: number, f2: number): boolean {
    if (block === 0) return false;
    const previous = block - 1;
    if (pos === 0) return this.insertInPlace(previous, this.counts[previous], f0, f1, f2);
    const data = this.blocks[block];
    if (!fitsPacking(data, f0, f1, f2)) return false;
    const [first0, first1, first2] = fieldsAt(data, 0);
    if (!this.insertInPlace(previous, this.counts[previous], first0, first1, first2)) return false;
    const { bits } = readHeader(data);
    const count = this.counts[block];
    moveBits(data, HEADER_BITS + bits, HEADER_BITS, (count - 1) * bits);
    this.counts[block] = count - 1;
    this.tree.add(block, -1);
    // It fits the packing, and a key's room was made.
    return this.insertInPlace(block, pos - 1, f0, f1, f2);
  }

  /** Unpacks the block's keys into `keys` from index `offset` on; returns their count. */
  private unpack(block: number, keys: Scratch, offset: number): number {
    const data = this.blocks[block];
    const count = this.counts[block];
    const { min0, step0, min1, min2, b0, b1, b2, bits } = readHeader(data);
    for (let i = 0, at = HEADER_BITS; i < count; i++, at += bits) {
      keys.f0[offset + i] = min0 + readField(data, at, b0) * step0;
      keys.f1[offset + i] = min1 + readField(data, at + b0, b1);
      keys.f2[offset + i] = min2 + readField(data, at + b0 + b1, b2);
    }
    return count;
  }

  /**
   * Makes block `block` hold keys[0 … count − 1] (its old keys with one more): in its buffer when
   * they fit (a small buffer grows), else a key goes to a neighbour with room, else it splits.
   */
  private store(block: number, keys: Scratch, count: number): void {
    const all = measure(keys, 0, count);
    if (fits(all)) {
      this.put(block, keys, all);
      this.tree.add(block, 1);
      return;
    }
    // Full: a neighbour with room takes a key first, so blocks stay full and a split (a new
    // block's buffer) comes only when the neighbours are full too.
    if (block + 1 < this.blocks.length) {
      const next = NEIGHBOUR;
      const nextCount = this.unpack(block + 1, next, 1) + 1;
      next.f0[0] = keys.f0[count - 1];
      next.f1[0] = keys.f1[count - 1];
      next.f2[0] = keys.f2[count - 1];
      const rest = measure(keys, 0, count - 1);
      const moved = measure(next, 0, nextCount);
      if (fits(rest) && fits(moved)) {
        this.put(block, keys, rest);
        this.put(block + 1, next, moved);
        this.tree.add(block + 1, 1);
        return;
      }
    }
    if (block > 0) {
      const previous = NEIGHBOUR;
      const previousCount = this.unpack(block - 1, previous, 0) + 1;
      previous.f0[previousCount - 1] = keys.f0[0];
      previous.f1[previousCount - 1] = keys.f1[0];
      previous.f2[previousCount - 1] = keys.f2[0];
      const rest = measure(keys, 1, count);
      const moved = measure(previous, 0, previousCount);
      if (fits(rest) && fits(moved)) {
        this.put(block, keys, rest);
        this.put(block - 1, previous, moved);
        this.tree.add(block - 1, 1);
        return;
      }
    }
    this.split(block, keys, count);
  }

  /** Packs into block `block`, in its buffer when it is big enough, else in a grown one. */
  private put(block: number, keys: Scratch, packing: Packing): void {
    let data = this.blocks[block];
    if (packing.words > data.length) this.blocks[block] = data = new Uint32Array(bufferWords(packing.words));
    pack(data, keys, packing);
    this.counts[block] = packing.to - packing.from;
  }

  /**
   * Splits keys[0 … count − 1] of a full block in two (or more, when a half does not fit a whole
   * buffer): the lower part stays in the block's buffer, the others take new ones.
   */
  private split(block: number, keys: Scratch, count: number): void {
    const parts: Packing[] = [];
    const cut = (from: number, to: number) => {
      const packing = measure(keys, from, to);
      if (fits(packing)) {
        parts.push(packing);
        return;
      }
      const middle = (from + to) >>> 1;
      cut(from, middle);
      cut(middle, to);
    };
    const middle = count >>> 1;
    cut(0, middle);
    cut(middle, count);
    const blocks = parts.map((packing, i) => {
      // The lower part stays in the block's buffer unless it outgrew it (a small block whose new key widened it).
      const own = this.blocks[block];
      const data = i === 0 && packing.words <= own.length ? own : new Uint32Array(bufferWords(packing.words));
      pack(data, keys, packing);
      return data;
    });
    this.blocks.splice(block, 1, ...blocks);
    this.counts.splice(block, 1, ...parts.map((packing) => packing.to - packing.from));
    this.tree.rebuild(this.counts);
  }
}

/**
 * Builds a CompactKeySet from keys appended in strictly ascending order (rows read in the rank
 * order, an old snapshot's runs): blocks packed to LOAD_WORDS of a whole buffer (at most
 * LOAD_KEYS keys), no sort and no array of every key. Throws on a key out of order, so a source
 * that does not sort as the index does can never load a wrong order.
 */
export class CompactKeySetBuilder {
  private readonly blocks: Uint32Array[] = [];
  private readonly counts: number[] = [];
  /** The block being gathered (from SCRATCH_POOL: a load builds thousands of sets, one after the other). */
  private keys: Scratch | null = null;
  private used = 0;
  private last0 = -1;
  private last1 = 0;
  private last2 = 0;
  /**
   * The gathered keys' packing: the first key's first field (keys come in order: the smallest)
   * and the last one's offset from it (the largest), the step, the other fields' ranges.
   */
  private min0 = 0;
  private span0 = 0;
  private step0 = 0;
  private min1 = 0;
  private max1 = 0;
  private min2 = 0;
  private max2 = 0;
  /** Bits a key of the gathered block takes. */
  private bits = 0;

  append(w0: number, w1: number, w2: number): void {
    if (
      this.last0 >= 0 &&
      !(this.last0 < w0 || (this.last0 === w0 && (this.last1 < w1 || (this.last1 === w1 && this.last2 < w2))))
    )
      throw new Error(
        `rank keys out of order: [${this.last0}, ${this.last1}, ${this.last2}] then [${w0}, ${w1}, ${w2}]`,
      );
    this.last0 = w0;
    this.last1 = w1;
    this.last2 = w2;
    const f0 = field0(w0);
    const f1 = field1(w0, w1);
    if (this.used > 0) {
      // The packing with this key; the block is packed first when the key would not fit its LOAD_WORDS.
      const d0 = f0 - this.min0;
      const step0 = d0 % this.step0 === 0 ? this.step0 : gcd(this.step0, d0);
      const min1 = f1 < this.min1 ? f1 : this.min1;
      const max1 = f1 > this.max1 ? f1 : this.max1;
      const min2 = w2 < this.min2 ? w2 : this.min2;
      const max2 = w2 > this.max2 ? w2 : this.max2;
      const bits =
        d0 === this.span0 &&
        step0 === this.step0 &&
        min1 === this.min1 &&
        max1 === this.max1 &&
        min2 === this.min2 &&
        max2 === this.max2
          ? this.bits
          : bitLength(d0 / (step0 || 1)) + bitLength(max1 - min1) + bitLength(max2 - min2);
      if (this.used < LOAD_KEYS && wordsFor(this.used + 1, bits) <= LOAD_WORDS) {
        // d0 is the largest offset so far (keys in order), so it sets the first field's width.
        this.span0 = d0;
        this.step0 = step0;
        this.min1 = min1;
        this.max1 = max1;
        this.min2 = min2;
        this.max2 = max2;
        this.bits = bits;
        this.put(f0, f1, w2);
        return;
      }
      this.flush();
    }
    this.keys ??= SCRATCH_POOL.pop() ?? new Scratch();
    this.min0 = f0;
    this.span0 = 0;
    this.step0 = 0;
    this.min1 = this.max1 = f1;
    this.min2 = this.max2 = w2;
    this.bits = 0;
    this.put(f0, f1, w2);
  }

  finish(): CompactKeySet {
    if (this.used > 0) this.flush();
    if (this.keys) SCRATCH_POOL.push(this.keys);
    this.keys = null;
    return CompactKeySet.fromBlocks(this.blocks, this.counts);
  }

  private put(f0: number, f1: number, f2: number): void {
    const keys = this.keys as Scratch;
    keys.f0[this.used] = f0;
    keys.f1[this.used] = f1;
    keys.f2[this.used] = f2;
    this.used++;
  }

  /**
   * Packs the keys gathered into a new block: a whole buffer when they need half of one (a loaded
   * block, packed to LOAD_WORDS), else one sized to them (a small chart's, a set's last).
   */
  private flush(): void {
    const packing = measure(this.keys as Scratch, 0, this.used);
    const data = new Uint32Array(bufferWords(packing.words));
    pack(data, this.keys as Scratch, packing);
    this.blocks.push(data);
    this.counts.push(this.used);
    this.used = 0;
  }
}

/** Scratch arrays of finished builders, for the next ones. */
const SCRATCH_POOL: Scratch[] = [];

/** The query "stored key < (f0, f1, f2)". */
function belowFields(q0: number, q1: number, q2: number): FieldQuery {
  return (f0, f1, f2) => (f0 !== q0 ? f0 < q0 : f1 !== q1 ? f1 < q1 : f2 < q2);
}

/** The first field: the top 20 bits of w0. */
const field0 = (w0: number) => w0 >>> 12;
/** The second field: the low 12 bits of w0, then w1 (44 bits). */
const field1 = (w0: number, w1: number) => (w0 & 0xfff) * TWO_32 + w1;
const word0 = (f0: number, f1: number) => f0 * 4096 + Math.floor(f1 / TWO_32);
const word1 = (f1: number) => f1 % TWO_32;

/** Bits needed for values 0 … range (range < 2^53). */
function bitLength(range: number): number {
  if (range < TWO_32) return 32 - Math.clz32(range);
  return 64 - Math.clz32(Math.floor(range / TWO_32));
}

/** Words of a block of `count` keys of `bits` bits each, header included. */
const wordsFor = (count: number, bits: number) => HEADER + Math.ceil((count * bits) / 32);

/** Whether a packing fits a whole buffer (a block's own, or a small one grown). */
const fits = (packing: Packing) => packing.to - packing.from <= MAX_KEYS && packing.words <= FULL_WORDS;

function measure(keys: Scratch, from: number, to: number): Packing {
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

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const rest = a % b;
    a = b;
    b = rest;
  }
  return a;
}

/** Writes the header and keys[from … to − 1] into `data` (which has packing.words words at least; the bits after them are left as they were). */
function pack(data: Uint32Array, keys: Scratch, packing: Packing): void {
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
function fieldsAt(data: Uint32Array, i: number): Float64Array {
  const { min0, step0, min1, min2, b0, b1, b2, at } = position(data, i);
  FIELDS[0] = min0 + readField(data, at, b0) * step0;
  FIELDS[1] = min1 + readField(data, at + b0, b1);
  FIELDS[2] = min2 + readField(data, at + b0 + b1, b2);
  return FIELDS;
}
const FIELDS = new Float64Array(3);

/** Whether a key's fields are within a block's packing: at or above its smallest values, on the step, within the widths. */
function fitsPacking(data: Uint32Array, f0: number, f1: number, f2: number): boolean {
  const { min0, step0, min1, min2, b0, b1, b2 } = readHeader(data);
  const d0 = (f0 - min0) / step0;
  const d1 = f1 - min1;
  const d2 = f2 - min2;
  return Number.isInteger(d0) && d0 >= 0 && d0 < 2 ** b0 && d1 >= 0 && d1 < 2 ** b1 && d2 >= 0 && d2 < 2 ** b2;
}

/** A block's header: each field's smallest value, the first field's step, the fields' widths and a key's bits. */
interface Header {
  min0: number;
  step0: number;
  min1: number;
  min2: number;
  b0: number;
  b1: number;
  b2: number;
  bits: number;
}

function readHeader(data: Uint32Array): Header {
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
function position(data: Uint32Array, i: number): Header & { at: number } {
  const header = readHeader(data);
  return { ...header, at: HEADER_BITS + i * header.bits };
}

/** Reads `width` (0 … 44) bits at bit `at`. */
function readField(data: Uint32Array, at: number, width: number): number {
  if (width <= 32) return readBits(data, at, width);
  return readBits(data, at, 32) + readBits(data, at + 32, width - 32) * TWO_32;
}

/** Reads `width` (0 … 32) bits at bit `at`, least significant first. */
function readBits(data: Uint32Array, at: number, width: number): number {
  if (width === 0) return 0;
  const word = at >>> 5;
  const shift = at & 31;
  let value = data[word] >>> shift;
  if (shift + width > 32) value = (value | (data[word + 1] << (32 - shift))) >>> 0;
  return width === 32 ? value : value & ((1 << width) - 1);
}

/** Writes `value` (0 … 2^width − 1, width 0 … 44) at bit `at`, whatever its bits were. */
function setField(data: Uint32Array, at: number, width: number, value: number): void {
  if (width <= 32) setBits(data, at, width, value);
  else {
    const high = Math.floor(value / TWO_32);
    setBits(data, at, 32, value - high * TWO_32);
    setBits(data, at + 32, width - 32, high);
  }
}

/** Writes `value` (0 … 2^width − 1, width 0 … 32) at bit `at`, whatever its bits were. */
function setBits(data: Uint32Array, at: number, width: number, value: number): void {
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
function wordAt(data: Uint32Array, at: number): number {
  const word = at >>> 5;
  const shift = at & 31;
  return shift === 0 ? data[word] : (data[word] >>> shift) | (data[word + 1] << (32 - shift));
}

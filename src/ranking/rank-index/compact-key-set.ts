import {
  belowFields,
  bufferWords,
  field0,
  field1,
  fieldsAt,
  FULL_WORDS,
  HEADER,
  HEADER_BITS,
  MAX_KEYS,
  moveBits,
  position,
  readField,
  readHeader,
  Scratch,
  word0,
  word1,
  wordsFor,
} from './compact-block';
import type { FieldQuery } from './compact-block';
import { CompactBlockList } from './compact-block-list';

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

/** Whether the stored key (w0, w1, w2) is below the key searched for. */
export type WordQuery = (w0: number, w1: number, w2: number) => boolean;

export type WordKey = [number, number, number];

/** The working space of a change: its block, unpacked. */
const BLOCK = new Scratch();

export class CompactKeySet extends CompactBlockList {
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

  /** Calls `visit` with every key in order (repacked, in compact-key-set-builder.ts). */
  forEachKey(visit: (w0: number, w1: number, w2: number) => void): void {
    for (let block = 0; block < this.blocks.length; block++)
      for (let i = 0; i < this.counts[block]; i++) {
        const [f0, f1, f2] = fieldsAt(this.blocks[block], i);
        visit(word0(f0, f1), word1(f1), f2);
      }
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
}

import { BlockFenwick } from './block-fenwick';
import {
  MAX_KEYS,
  HEADER_BITS,
  TWO_32,
  bufferWords,
  Scratch,
  wordsFor,
  fits,
  measure,
  pack,
  fieldsAt,
  fitsPacking,
  readHeader,
  position,
  readField,
  setField,
  moveBits,
} from './compact-block';
import type { Packing } from './compact-block';

/** A neighbour's keys, unpacked, while a change hands one to it. */
const NEIGHBOUR = new Scratch();

/**
 * The blocks of a CompactKeySet (compact-key-set.ts) and the changes that rewrite them: a key in
 * place when it fits the block's packing, handed to the previous block, or the block unpacked,
 * changed and packed again (to a neighbour with room first, then split). The set's searches and
 * its public operations are in CompactKeySet.
 */
export abstract class CompactBlockList {
  protected blocks: Uint32Array[] = [];
  protected counts: number[] = [];
  /** Fenwick tree over `counts`. */
  protected readonly tree = new BlockFenwick();
  protected total = 0;

  /**
   * Inserts the key at `pos` without repacking when its fields fit the block's packing and the
   * buffer has room for one more: the keys from `pos` on move up by one key's bits (the count and
   * the tree follow). False otherwise, nothing changed.
   */
  protected insertInPlace(block: number, pos: number, f0: number, f1: number, f2: number): boolean {
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
  protected insertAfterHandingBack(block: number, pos: number, f0: number, f1: number, f2: number): boolean {
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
  protected unpack(block: number, keys: Scratch, offset: number): number {
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
  protected store(block: number, keys: Scratch, count: number): void {
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
  protected put(block: number, keys: Scratch, packing: Packing): void {
    let data = this.blocks[block];
    if (packing.words > data.length) this.blocks[block] = data = new Uint32Array(bufferWords(packing.words));
    pack(data, keys, packing);
    this.counts[block] = packing.to - packing.from;
  }

  /**
   * Splits keys[0 … count − 1] of a full block in two (or more, when a half does not fit a whole
   * buffer): the lower part stays in the block's buffer, the others take new ones.
   */
  protected split(block: number, keys: Scratch, count: number): void {
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

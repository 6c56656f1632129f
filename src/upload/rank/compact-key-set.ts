import { BlockFenwick } from './block-fenwick';

/**
 * A set of keys of three unsigned 32-bit words (compared lexicographically) that answers "how many
 * keys are below this one" in O(log n): the storage of the in-process rank index, 12 bytes a key
 * (about 12.5 with the room loaded blocks keep).
 *
 * Layout: sorted blocks of at most MAX_BLOCK keys, each a Uint32Array of consecutive word triples,
 * plus a Fenwick tree over the block sizes. A lookup binary-searches the block ends, then inside
 * the block; an insert or delete shifts at most one block. An insert into a full block first hands
 * a key to a neighbour with room (as a B*-tree does); only when both are full does the block split
 * in two. An emptied block is dropped. A split or a drop rebuilds the Fenwick tree (O(n / MAX_BLOCK)).
 * Loading appends sorted keys (CompactKeySetBuilder) into blocks filled to LOAD_FILL.
 *
 * Buffers: a block of at least half of MAX_BLOCK keys has a whole block's buffer (BLOCK_WORDS, the
 * same size for all of them), a smaller one (a small chart's, a set's last) a buffer close to its
 * count that grows by an eighth. So a big block is never reallocated: loaded blocks keep their room
 * (LOAD_FILL of MAX_BLOCK), a full one passes keys to its neighbours, and a split keeps the lower
 * half in place. Growing into a new buffer would leave the old one free, of a size malloc cannot
 * give to the next block that grows, and a day of uploads stranded ~50 MiB that way
 * (docs/benchmarks.md, "Rank index memory under uploads"); handing keys on keeps the blocks full
 * where splitting would leave two half-empty ones.
 */
export const MAX_BLOCK = 512;
/** Keys per block when loading: ~97 %, the rest is room for inserts (and a neighbour's keys) in place. */
export const LOAD_FILL = 496;
/** A whole block's buffer: 6 KiB. */
const BLOCK_WORDS = MAX_BLOCK * 3;
const MIN_GROWTH = 8;

/** Whether a block of `keys` keys gets a whole block's buffer. */
const isBig = (keys: number) => keys >= MAX_BLOCK >>> 1;

/** A buffer for a block about to hold `keys` keys (the class comment's sizes). */
export function blockBuffer(keys: number): Uint32Array {
  return new Uint32Array(isBig(keys) ? BLOCK_WORDS : (keys + Math.max(MIN_GROWTH, keys >>> 3)) * 3);
}

/** Whether the stored key at `offset` (a word index into `data`) is below the key searched for. */
export type BelowQuery = (data: Uint32Array, offset: number) => boolean;

export type WordKey = [number, number, number];

export class CompactKeySet {
  private blocks: Uint32Array[] = [];
  private counts: number[] = [];
  /** Fenwick tree over `counts`. */
  private readonly tree = new BlockFenwick();
  private total = 0;

  /** A set over sorted, strictly ascending blocks holding `counts[i]` keys each (the builder and the snapshot reader). */
  static fromBlocks(blocks: readonly Uint32Array[], counts: readonly number[]): CompactKeySet {
    const set = new CompactKeySet();
    blocks.forEach((block, i) => {
      const count = counts[i];
      if (count === 0) return;
      if (count * 3 > block.length || count > MAX_BLOCK)
        throw new Error(`a block of ${block.length / 3} keys cannot hold ${count}`);
      set.blocks.push(block);
      set.counts.push(count);
      set.total += count;
    });
    set.tree.rebuild(set.counts);
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
    return this.countWhere(belowWords(w0, w1, w2));
  }

  /** Keys below a key given by its order only (`below` must be true for a prefix of the keys). */
  countWhere(below: BelowQuery): number {
    const block = this.blockFor(below);
    if (block < 0) return this.total;
    return this.tree.prefix(block) + this.lowerBound(block, below);
  }

  has(w0: number, w1: number, w2: number): boolean {
    const below = belowWords(w0, w1, w2);
    const block = this.blockFor(below);
    if (block < 0) return false;
    const pos = this.lowerBound(block, below);
    return pos < this.counts[block] && equalsAt(this.blocks[block], pos * 3, w0, w1, w2);
  }

  /** Adds the key; false when it was there already. */
  insert(w0: number, w1: number, w2: number): boolean {
    if (this.blocks.length === 0) {
      this.blocks.push(blockBuffer(0));
      this.counts.push(0);
      this.tree.rebuild(this.counts);
    }
    const below = belowWords(w0, w1, w2);
    let block = this.blockFor(below);
    if (block < 0) block = this.blocks.length - 1;
    let count = this.counts[block];
    let pos = this.lowerBound(block, below);
    if (pos < count && equalsAt(this.blocks[block], pos * 3, w0, w1, w2)) return false;
    if (count === MAX_BLOCK) {
      // Full: a neighbour with room takes a key first (as a B*-tree does), so blocks stay full and
      // a split (a new block's buffer) comes only when the neighbours are full too.
      if (this.hasRoom(block + 1)) {
        this.moveLastToNext(block);
        count--;
      } else if (this.hasRoom(block - 1) && pos === 0) {
        // The key sorts between the previous block's last key and this block's first: it ends the previous block.
        block--;
        pos = count = this.counts[block];
      } else if (this.hasRoom(block - 1)) {
        this.moveFirstToPrevious(block);
        count--;
        pos--;
      } else {
        this.split(block);
        return this.insert(w0, w1, w2);
      }
    }
    let data = this.blocks[block];
    if ((count + 1) * 3 > data.length) {
      const grown = blockBuffer(count + 1);
      grown.set(data.subarray(0, count * 3));
      this.blocks[block] = data = grown;
    }
    data.copyWithin((pos + 1) * 3, pos * 3, count * 3);
    data[pos * 3] = w0;
    data[pos * 3 + 1] = w1;
    data[pos * 3 + 2] = w2;
    this.counts[block] = count + 1;
    this.total++;
    this.tree.add(block, 1);
    return true;
  }

  /** Removes the key; false when it was not there. */
  delete(w0: number, w1: number, w2: number): boolean {
    const below = belowWords(w0, w1, w2);
    const block = this.blockFor(below);
    if (block < 0) return false;
    const count = this.counts[block];
    const pos = this.lowerBound(block, below);
    const data = this.blocks[block];
    if (pos >= count || !equalsAt(data, pos * 3, w0, w1, w2)) return false;
    data.copyWithin(pos * 3, (pos + 1) * 3, count * 3);
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
      const data = this.blocks[block];
      const count = this.counts[block];
      let kept = 0;
      for (let i = 0; i < count; i++) {
        const offset = i * 3;
        if (drop(data[offset + 2])) continue;
        if (kept !== i) data.copyWithin(kept * 3, offset, offset + 3);
        kept++;
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
      const data = this.blocks[block];
      const stop = Math.min(this.counts[block], offset + left);
      for (let i = offset; i < stop; i++) keys.push([data[i * 3], data[i * 3 + 1], data[i * 3 + 2]]);
      left -= stop - offset;
    }
    return keys;
  }

  /** The used part of every block, in order (snapshot writing; valid until the next change). */
  *usedBlocks(): IterableIterator<Uint32Array> {
    for (let block = 0; block < this.blocks.length; block++) {
      if (this.counts[block] > 0) yield this.blocks[block].subarray(0, this.counts[block] * 3);
    }
  }

  /** Every key in order (tests and diagnostics). */
  *keys(): IterableIterator<WordKey> {
    for (const data of this.usedBlocks()) {
      for (let i = 0; i < data.length; i += 3) yield [data[i], data[i + 1], data[i + 2]];
    }
  }

  /** The first block whose last key is not below the query, or -1 when every key is below it. */
  private blockFor(below: BelowQuery): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const count = this.counts[mid];
      if (count === 0 || below(this.blocks[mid], (count - 1) * 3)) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.blocks.length ? lo : -1;
  }

  /** Position of the first key of the block that is not below the query. */
  private lowerBound(block: number, below: BelowQuery): number {
    const data = this.blocks[block];
    let lo = 0;
    let hi = this.counts[block];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (below(data, mid * 3)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether block `block` exists and has room for one more key in its buffer. */
  private hasRoom(block: number): boolean {
    return block >= 0 && block < this.blocks.length && this.counts[block] * 3 < this.blocks[block].length;
  }

  /** Moves the last key of `block` to the front of the next block (which has room). */
  private moveLastToNext(block: number): void {
    const data = this.blocks[block];
    const last = (this.counts[block] - 1) * 3;
    const next = this.blocks[block + 1];
    next.copyWithin(3, 0, this.counts[block + 1] * 3);
    next[0] = data[last];
    next[1] = data[last + 1];
    next[2] = data[last + 2];
    this.counts[block]--;
    this.counts[block + 1]++;
    this.tree.add(block, -1);
    this.tree.add(block + 1, 1);
  }

  /** Moves the first key of `block` to the end of the previous block (which has room). */
  private moveFirstToPrevious(block: number): void {
    const data = this.blocks[block];
    const previous = this.blocks[block - 1];
    const end = this.counts[block - 1] * 3;
    previous[end] = data[0];
    previous[end + 1] = data[1];
    previous[end + 2] = data[2];
    data.copyWithin(0, 3, this.counts[block] * 3);
    this.counts[block]--;
    this.counts[block - 1]++;
    this.tree.add(block, -1);
    this.tree.add(block - 1, 1);
  }

  /** Splits a full block in two: the lower half stays in its buffer, the upper half moves to a new one. */
  private split(block: number): void {
    const data = this.blocks[block];
    const count = this.counts[block];
    const half = count >>> 1;
    const lower = data;
    const upper = blockBuffer(count - half);
    upper.set(data.subarray(half * 3, count * 3));
    this.blocks.splice(block, 1, lower, upper);
    this.counts.splice(block, 1, half, count - half);
    this.tree.rebuild(this.counts);
  }
}

/** The query "stored key < (w0, w1, w2)". */
export function belowWords(w0: number, w1: number, w2: number): BelowQuery {
  return (data, offset) => {
    const x = data[offset];
    if (x !== w0) return x < w0;
    const y = data[offset + 1];
    if (y !== w1) return y < w1;
    return data[offset + 2] < w2;
  };
}

function equalsAt(data: Uint32Array, offset: number, w0: number, w1: number, w2: number): boolean {
  return data[offset] === w0 && data[offset + 1] === w1 && data[offset + 2] === w2;
}

/**
 * Builds a CompactKeySet from keys appended in strictly ascending order (rows read in the rank
 * order): blocks of LOAD_FILL keys sized exactly, no sort and no array of every key. Throws on a key
 * out of order, so a source that does not sort as the index does can never load a wrong order.
 */
export class CompactKeySetBuilder {
  private readonly blocks: Uint32Array[] = [];
  private readonly counts: number[] = [];
  private block = blockBuffer(LOAD_FILL);
  private used = 0;
  private last: WordKey | null = null;

  append(w0: number, w1: number, w2: number): void {
    const last = this.last;
    if (last && !(last[0] < w0 || (last[0] === w0 && (last[1] < w1 || (last[1] === w1 && last[2] < w2)))))
      throw new Error(`rank keys out of order: [${last.join(', ')}] then [${w0}, ${w1}, ${w2}]`);
    if (last) {
      last[0] = w0;
      last[1] = w1;
      last[2] = w2;
    } else this.last = [w0, w1, w2];
    if (this.used === LOAD_FILL) {
      this.blocks.push(this.block);
      this.counts.push(LOAD_FILL);
      this.block = blockBuffer(LOAD_FILL);
      this.used = 0;
    }
    const offset = this.used * 3;
    this.block[offset] = w0;
    this.block[offset + 1] = w1;
    this.block[offset + 2] = w2;
    this.used++;
  }

  finish(): CompactKeySet {
    if (this.used > 0) {
      let last = this.block;
      if (!isBig(this.used)) {
        // A small last block is sized to its keys, as any small block (blockBuffer).
        last = blockBuffer(this.used);
        last.set(this.block.subarray(0, this.used * 3));
      }
      this.blocks.push(last);
      this.counts.push(this.used);
    }
    this.used = 0;
    return CompactKeySet.fromBlocks(this.blocks, this.counts);
  }
}

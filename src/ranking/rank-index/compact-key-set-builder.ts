import {
  bitLength,
  bufferWords,
  field0,
  field1,
  gcd,
  LOAD_KEYS,
  LOAD_WORDS,
  measure,
  pack,
  Scratch,
  wordsFor,
} from './compact-block';
import { CompactKeySet } from './compact-key-set';

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

/**
 * The same keys packed afresh, as a load packs them (blocks filled to LOAD_WORDS): new keys
 * split blocks, which settle ~80 % full, and a snapshot written from this set gives the next
 * start the loaded density back (docs/decisions.md "Bit-packed blocks"). `set` is unchanged.
 */
export function repacked(set: CompactKeySet): CompactKeySet {
  const builder = new CompactKeySetBuilder();
  set.forEachKey((w0, w1, w2) => builder.append(w0, w1, w2));
  return builder.finish();
}

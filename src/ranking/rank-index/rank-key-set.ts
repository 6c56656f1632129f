import { CompactKeySet } from './compact-key-set';
import { CompactKeySetBuilder } from './compact-key-set-builder';
import { OrderStatisticSet } from './order-statistic-set';
import type { RankKey } from './rank-index';
import type { RankKeyCodec } from './rank-key-codec';

/**
 * One rank order of the in-process index, with OrderStatisticSet's API on RankKey numbers: the
 * keys the codec packs live in a CompactKeySet (bit-packed, 7–8 bytes a key on the network's data), the rest (an acc with more than
 * four decimals, a uid ≥ 2^32, a time outside 2000–2557) in a wide OrderStatisticSet (24 bytes a
 * key, normally empty). Every answer counts both, so a key that does not pack is still ranked
 * exactly, never rounded.
 */
export class RankKeySet {
  private readonly words = new Uint32Array(3);

  constructor(
    readonly codec: RankKeyCodec,
    private compact = new CompactKeySet(),
    private wide = new OrderStatisticSet(),
  ) {}

  get size(): number {
    return this.compact.size + this.wide.size;
  }

  /** Keys that did not pack (kept 24 bytes a key). */
  get wideSize(): number {
    return this.wide.size;
  }

  /** Bytes held by the compact blocks plus 24 per wide key (what the keys cost, not the JS objects). */
  get bytes(): number {
    return this.compact.bytes + this.wide.size * 24;
  }

  /** Number of keys strictly below (a, b, c). */
  countBelow(a: number, b: number, c: number): number {
    return this.compactBelow(a, b, c) + this.wide.countBelow(a, b, c);
  }

  has(a: number, b: number, c: number): boolean {
    const w = this.words;
    return this.codec.encode(a, b, c, w) ? this.compact.has(w[0], w[1], w[2]) : this.wide.has(a, b, c);
  }

  /** Adds the key; false when it was there already. */
  insert(a: number, b: number, c: number): boolean {
    const w = this.words;
    return this.codec.encode(a, b, c, w) ? this.compact.insert(w[0], w[1], w[2]) : this.wide.insert(a, b, c);
  }

  /** Removes the key; false when it was not there. */
  delete(a: number, b: number, c: number): boolean {
    const w = this.words;
    return this.codec.encode(a, b, c, w) ? this.compact.delete(w[0], w[1], w[2]) : this.wide.delete(a, b, c);
  }

  /** Removes every key of the players `drop` names (by uid), in one pass. Returns how many went. */
  removeUids(drop: (uid: number) => boolean): number {
    let removed = this.compact.removeWhereThird(drop);
    if (this.wide.size > 0) {
      for (const key of [...this.wide.keys()]) if (drop(key[2]) && this.wide.delete(...key)) removed++;
    }
    return removed;
  }

  /** The key at `position` (0-based, in order), or null outside 0 … size − 1. */
  at(position: number): RankKey | null {
    return this.slice(position, position + 1)[0] ?? null;
  }

  /** The keys at positions start … end − 1 (clamped to the set), in order. */
  slice(start: number, end: number): RankKey[] {
    const from = Math.max(0, Math.floor(start));
    const to = Math.min(this.size, Math.floor(end));
    if (from >= to) return [];
    const decode = (w: [number, number, number]) => this.codec.decode(w[0], w[1], w[2]);
    if (this.wide.size === 0) return this.compact.slice(from, to).map(decode);
    // Wide keys among the first `from` of the union: the largest j whose wide key j − 1 stands
    // before position `from` (its union position is j − 1 plus the compact keys below it).
    let lo = Math.max(0, from - this.compact.size);
    let hi = Math.min(from, this.wide.size);
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const key = this.wide.at(mid - 1) as RankKey;
      if (mid - 1 + this.compactBelow(...key) < from) lo = mid;
      else hi = mid - 1;
    }
    const length = to - from;
    const compact = this.compact.slice(from - lo, from - lo + length).map(decode);
    const wide = this.wide.slice(lo, lo + length);
    const keys: RankKey[] = [];
    for (let i = 0, j = 0; keys.length < length;) {
      if (j >= wide.length || (i < compact.length && compareKeys(compact[i], wide[j]) < 0)) keys.push(compact[i++]);
      else keys.push(wide[j++]);
    }
    return keys;
  }

  /** Every key in order (tests, diagnostics). */
  *keys(): IterableIterator<RankKey> {
    yield* this.slice(0, this.size);
  }

  /** The parts a snapshot stores: the compact blocks and the wide keys. */
  parts(): { compact: CompactKeySet; wide: OrderStatisticSet } {
    return { compact: this.compact, wide: this.wide };
  }

  /** Compact keys below (a, b, c): by words when the key packs, else by decoding while searching. */
  private compactBelow(a: number, b: number, c: number): number {
    const w = this.words;
    if (this.codec.encode(a, b, c, w)) return this.compact.countBelow(w[0], w[1], w[2]);
    const query: RankKey = [a, b, c];
    return this.compact.countWhere((w0, w1, w2) => compareKeys(this.codec.decode(w0, w1, w2), query) < 0);
  }
}

/**
 * Builds a RankKeySet from keys given in strictly ascending rank order (rows read sorted): packed
 * keys straight into compact blocks, the others into the wide set.
 */
export class RankKeySetBuilder {
  private readonly compact = new CompactKeySetBuilder();
  private readonly wide = new OrderStatisticSet();
  private readonly words = new Uint32Array(3);

  constructor(private readonly codec: RankKeyCodec) {}

  append(a: number, b: number, c: number): void {
    const w = this.words;
    if (this.codec.encode(a, b, c, w)) this.compact.append(w[0], w[1], w[2]);
    else this.wide.insert(a, b, c);
  }

  finish(): RankKeySet {
    return new RankKeySet(this.codec, this.compact.finish(), this.wide);
  }
}

export function compareKeys(x: RankKey, y: RankKey): number {
  if (x[0] !== y[0]) return x[0] < y[0] ? -1 : 1;
  if (x[1] !== y[1]) return x[1] < y[1] ? -1 : 1;
  if (x[2] !== y[2]) return x[2] < y[2] ? -1 : 1;
  return 0;
}

/**
 * A Fenwick tree over the sizes of a sorted set's blocks (OrderStatisticSet, CompactKeySet): the
 * number of keys before a block, and the block of a position, in O(log blocks). Rebuilt in
 * O(blocks) when blocks are added or dropped; a key added to or taken from a block is `add`.
 */
export class BlockFenwick {
  /** 1-based: tree[i] sums the sizes of blocks i − (i & −i) … i − 1. */
  private tree: number[] = [0];

  /** Rebuilds the tree from every block's size. */
  rebuild(counts: readonly number[]): void {
    const n = counts.length;
    const tree = new Array<number>(n + 1).fill(0);
    for (let i = 1; i <= n; i++) {
      tree[i] += counts[i - 1];
      const parent = i + (i & -i);
      if (parent <= n) tree[parent] += tree[i];
    }
    this.tree = tree;
  }

  /** Block `block` grew by `delta` keys (negative: shrank). */
  add(block: number, delta: number): void {
    for (let i = block + 1; i < this.tree.length; i += i & -i) this.tree[i] += delta;
  }

  /** Keys in the blocks before `block`. */
  prefix(block: number): number {
    let sum = 0;
    for (let i = block; i > 0; i -= i & -i) sum += this.tree[i];
    return sum;
  }

  /** The block holding position `position` (0 ≤ position < total) and the position inside it: a descent of the tree. */
  locate(position: number): [block: number, offset: number] {
    const n = this.tree.length - 1;
    let step = 1;
    while (step * 2 <= n) step *= 2;
    let at = 0;
    let left = position;
    for (; step > 0; step >>>= 1) {
      if (at + step <= n && this.tree[at + step] <= left) {
        at += step;
        left -= this.tree[at];
      }
    }
    return [at, left];
  }
}

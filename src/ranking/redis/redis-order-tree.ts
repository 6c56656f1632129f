import { luaScript } from './lua-scripts';

/**
 * A counted B+-tree of fixed-width records in Redis strings, written in Lua: the storage of the
 * Redis rank index (redis-rank-index.ts). A Redis sorted set costs about 100 bytes an entry in its
 * skiplist form, so 10M rank entries took 1.85 GB; here a chart's entry is a 21-byte record.
 *
 * One tree per order (the site order, one per chart). Its meta key is a hash: `r` root node id,
 * `h` height (1: the root is a leaf), `n` last node id given out, `c` entries. Node `<id>` is the
 * string key `<meta key>:<id>`:
 * - a leaf: its records, ascending, each `width` bytes;
 * - an inner node: entries of (child id: 4 bytes, entries under that child: 4 bytes, separator:
 *   the child's first record when it was split off). Every record under child i is ≥ separator i
 *   and < separator i + 1; the first entry's separator is never read.
 * A node holds at most CAPACITY records or entries. A full node splits in half, except at the
 * tree's right end, where the left part keeps RIGHT_FILL (a load appends in order, so loaded leaves
 * are ~94 % full). An emptied node goes; a node at most a quarter full is merged with a neighbour
 * when both fit in three quarters of a node. A root with one child hands the root to it.
 *
 * Records are big-endian unsigned integers (Lua's `struct`), compared as numbers, never as strings
 * (Lua compares strings with strcoll, which depends on the server's locale). Every number is an
 * integer below 2^53, so Lua's doubles hold it exactly and integer replies return it exactly:
 * - site (`s`): 2^47 − ATP in ten-thousandths (6 bytes), uid (7 bytes): 13 bytes;
 * - chart (`t`): 2^32 − 1 − each half of acc's IEEE 754 bits (4 + 4 bytes: any acc ≥ 0 exactly,
 *   descending), 2^47 + first reached in ms (6 bytes), uid (7 bytes): 21 bytes.
 *
 * Node keys are not passed as KEYS (the script names them from the tree's meta key), so the index
 * needs a single Redis, not a Redis Cluster (docs/decisions.md).
 */
export const TREE_CAPACITY = 128;

/** How a script error about a damaged tree begins (a missing node, counts that do not add up). */
export const TREE_DAMAGED = 'rank tree damaged';

/**
 * The tree functions (lua/order-tree.lua), which raise TREE_DAMAGED errors: the file spells the
 * message out (a test holds them together).
 */
const ORDER_TREE_LUA = luaScript('order-tree');

/** The tree functions, for a node capacity (tests use a small one to split and merge often). */
export function orderTreeLua(capacity: number = TREE_CAPACITY): string {
  const rightFill = Math.max(1, Math.floor((capacity * 15) / 16));
  return `
local CAPACITY = ${capacity}
local RIGHT_FILL = ${rightFill}
local MERGE_BELOW = ${Math.floor(capacity / 4) + 1}
local MERGE_UPTO = ${Math.max(2, Math.floor((capacity * 3) / 4))}
${ORDER_TREE_LUA}`;
}

const OFFSET = 2 ** 47;
const WORD = 0xffffffff;
/** Versions are stored in 6 bytes. */
const MAX_VERSION = 2 ** 48 - 1;
const bits = new DataView(new ArrayBuffer(8));

/** A uid as a record number (Lua's doubles hold uids exactly below 2^53; BIGSERIAL uids are). */
export function uidNumber(uid: string): string {
  if (uid.length > 16 || Number(uid) > Number.MAX_SAFE_INTEGER)
    throw new RangeError(`uid ${uid} is above 2^53: the Redis rank index cannot hold it exactly`);
  return uid;
}

export function versionNumber(version: number): string {
  if (!Number.isInteger(version) || version < 0 || version > MAX_VERSION)
    throw new RangeError(`rank version ${version} does not fit the Redis rank index's 6 bytes`);
  return String(version);
}

/** The site record's first number for an ATP in ten-thousandths (ascending = ATP descending). */
export function siteNumbers(atpE4: number): [string] {
  if (!Number.isInteger(atpE4) || Math.abs(atpE4) >= OFFSET) throw new RangeError(`ATP ${atpE4 / 10_000} out of range`);
  return [String(OFFSET - atpE4)];
}

/** A chart record's first three numbers: acc's bits, inverted (acc descending), and the time. */
export function trackNumbers(acc: number, firstTimeMs: number): [string, string, string] {
  if (!(acc >= 0) || !Number.isFinite(acc)) throw new RangeError(`acc ${acc} out of range`);
  if (!Number.isInteger(firstTimeMs) || Math.abs(firstTimeMs) >= OFFSET)
    throw new RangeError(`first reached ${firstTimeMs} out of range`);
  bits.setFloat64(0, acc === 0 ? 0 : acc);
  return [String(WORD - bits.getUint32(0)), String(WORD - bits.getUint32(4)), String(firstTimeMs + OFFSET)];
}

/** The rank key (rank-index.ts RankKey) of a site record's numbers (a, uid). */
export function siteRankKey(a: number, uid: number): [number, number, number] {
  return [a - OFFSET, 0, uid];
}

/** The rank key of a chart record's numbers (inverted acc halves, time, uid). */
export function trackRankKey(a1: number, a2: number, time: number, uid: number): [number, number, number] {
  bits.setUint32(0, WORD - a1);
  bits.setUint32(4, WORD - a2);
  const acc = bits.getFloat64(0);
  return [acc === 0 ? 0 : -acc, time - OFFSET, uid];
}

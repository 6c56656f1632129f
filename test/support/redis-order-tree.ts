import type Redis from 'ioredis';
import { orderTreeLua, trackNumbers, TREE_CAPACITY } from '../../src/ranking/redis/redis-order-tree';

/**
 * Runs the rank index's own tree functions (redis-order-tree.ts) with a test dispatcher: one
 * operation on the tree at `tree` (a full key name, the client has no key prefix), and `check`,
 * which walks every node and fails on any broken invariant (order, separators, counts, capacity,
 * empty nodes) and answers {records, nodes, height, the records' numbers in order}.
 */
export function treeScript(capacity: number): string {
  return `${orderTreeLua(capacity)}
local kind = KINDS[ARGV[1]]
local op = ARGV[2]
local nums = {}
for i = 3, #ARGV do nums[#nums + 1] = tonumber(ARGV[i]) end
local tree = KEYS[1]
if op == 'insert' then return tree_insert(tree, kind, nums) and 1 or 0 end
if op == 'insert_counted' then
  local inserted, below = tree_insert(tree, kind, nums, true)
  return {inserted and 1 or 0, below}
end
if op == 'delete' then return tree_delete(tree, kind, nums) and 1 or 0 end
if op == 'below' then return tree_count_below(tree, kind, nums) end
if op == 'find' then
  local rank, found = tree_find(tree, kind, nums)
  return {rank, found and 1 or 0}
end
if op == 'range' then return flatten(tree_range(tree, kind, nums[1], nums[2])) end
-- check
local meta = redis.call('HMGET', tree, 'r', 'h', 'c')
if not meta[1] then return {0, 0, 0, {}} end
local W, E = kind.width, kind.width + 8
local nodes, records = 0, {}
local function less(a, b) return compare_keys(kind, a, b) < 0 end
local function walk(id, height, lower, upper, is_root)
  nodes = nodes + 1
  local s = redis.call('GET', node_key(tree, id))
  if not s then error('node ' .. id .. ' is missing') end
  if height == 1 then
    local n = #s / W
    if n > CAPACITY then error('leaf ' .. id .. ' holds ' .. n) end
    if n == 0 and not is_root then error('leaf ' .. id .. ' is empty') end
    for j = 0, n - 1 do
      local record = kind.unpack(s, j * W + 1)
      if lower and less(record, lower) then error('leaf ' .. id .. ' holds a record below its separator') end
      if upper and not less(record, upper) then error('leaf ' .. id .. ' holds a record at or above the next separator') end
      if #records > 0 and not less(records[#records], record) then error('records out of order in leaf ' .. id) end
      records[#records + 1] = record
    end
    return n
  end
  local entries = #s / E
  if entries < 1 or entries > CAPACITY then error('inner node ' .. id .. ' holds ' .. entries) end
  if is_root and entries < 2 then error('the root has one child') end
  local total = 0
  for j = 0, entries - 1 do
    local child, count = struct.unpack('>I4I4', s, j * E + 1)
    local lo, hi = lower, upper
    if j > 0 then lo = kind.unpack(s, j * E + 9) end
    if j < entries - 1 then hi = kind.unpack(s, (j + 1) * E + 9) end
    if j > 0 and lower and less(lo, lower) then error('separator below the parent one in ' .. id) end
    local got = walk(child, height - 1, lo, hi, false)
    if got ~= count then error('node ' .. id .. ' counts ' .. count .. ' under child ' .. child .. ', which holds ' .. got) end
    total = total + got
  end
  return total
end
local total = walk(tonumber(meta[1]), tonumber(meta[2]), nil, nil, true)
if total ~= tonumber(meta[3] or '0') then error('the tree counts ' .. tostring(meta[3]) .. ', its leaves hold ' .. total) end
return {total, nodes, tonumber(meta[2]), flatten(records)}
`;
}

export interface TreeCheck {
  records: number;
  nodes: number;
  height: number;
  numbers: number[];
}

/** A client for one tree key, running the functions with `capacity`. */
export class TestOrderTree {
  private readonly script: string;

  constructor(
    private readonly redis: Redis,
    readonly key: string,
    private readonly kind: 's' | 't',
    capacity: number,
  ) {
    this.script = treeScript(capacity);
  }

  private run(op: string, numbers: Array<number | string>): Promise<unknown> {
    return this.redis.eval(this.script, 1, this.key, this.kind, op, ...numbers.map(String));
  }

  async insert(key: number[]): Promise<boolean> {
    return (await this.run('insert', key)) === 1;
  }

  /** Inserts and answers the records below the key, as the upload's script does. */
  async insertCounted(key: number[]): Promise<{ inserted: boolean; below: number }> {
    const [inserted, below] = (await this.run('insert_counted', key)) as [number, number];
    return { inserted: inserted === 1, below };
  }

  async delete(key: number[]): Promise<boolean> {
    return (await this.run('delete', key)) === 1;
  }

  async below(key: number[]): Promise<number> {
    return (await this.run('below', key)) as number;
  }

  async find(key: number[]): Promise<{ rank: number; found: boolean }> {
    const [rank, found] = (await this.run('find', key)) as [number, number];
    return { rank, found: found === 1 };
  }

  async range(from: number, count: number): Promise<number[]> {
    return (await this.run('range', [from, count])) as number[];
  }

  async check(): Promise<TreeCheck> {
    const [records, nodes, height, numbers] = (await this.run('check', [])) as [number, number, number, number[]];
    return { records, nodes, height, numbers };
  }

  /** Node keys in Redis (every key under the tree's prefix but its meta hash). */
  async nodeKeys(): Promise<number> {
    return (await this.redis.keys(`${this.key}:*`)).length;
  }
}

/** Whether the service's Redis rank index (of a key generation) holds exactly this best on the chart. */
export async function redisIndexHoldsBest(
  redis: Redis,
  prefix: string,
  levelId: number,
  best: { acc: number; firstTimeMs: number; uid: string },
  generation = 0,
): Promise<boolean> {
  const base = generation === 0 ? `${prefix}rank3:` : `${prefix}rank3:g${generation}:`;
  const tree = new TestOrderTree(redis, `${base}t:${levelId}`, 't', TREE_CAPACITY);
  return (await tree.find([...trackNumbers(best.acc, best.firstTimeMs), best.uid].map(Number))).found;
}

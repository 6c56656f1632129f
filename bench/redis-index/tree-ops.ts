/**
 * What one operation of the Redis rank tree (src/ranking/redis/redis-order-tree.ts) costs inside
 * Redis, on a chart tree the size of the network day's busiest chart (184,000 records), on a
 * Redis server of the benchmark's own. Each figure is one EVAL running the operation N times in a
 * Lua loop, timed from the client and divided by N (a single call's round trip is amortised away).
 *
 *   npm run bench:redis-tree-ops
 *   TREE_RECORDS=1000000 TREE_CAPACITY=256 npm run bench:redis-tree-ops
 */
import Redis from 'ioredis';
import { orderTreeLua, TREE_CAPACITY } from '../../src/ranking/redis/redis-order-tree';
import { intFromEnv, loadAverage, runMain } from '../harness/env';
import { startPrivateRedis } from '../harness/redis';

const RECORDS = intFromEnv('TREE_RECORDS', 184_000);
const CAPACITY = intFromEnv('TREE_CAPACITY', TREE_CAPACITY);
const N = intFromEnv('TREE_OPS', 20_000);

/** Chart records (a1, a2, time, uid): one acc, times 0 … RECORDS − 1 (so every comparison reads the time). */
const SCRIPT = `${orderTreeLua(CAPACITY)}
local kind = KINDS.t
local tree, op, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local seed = 42
local function random_time()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % ${RECORDS}
end
if op == 'load' then
  for i = 0, n - 1 do tree_insert(tree, kind, {1000, 5, i, i}, false) end
elseif op == 'count_below' then
  for _ = 1, n do tree_count_below(tree, kind, {1000, 5, random_time(), 7}) end
elseif op == 'insert_counted+delete' then
  for _ = 1, n do
    local key = {1000, 5, random_time(), 3}
    tree_insert(tree, kind, key, true)
    tree_delete(tree, kind, key)
  end
elseif op == 'range_10' then
  for _ = 1, n do tree_range(tree, kind, random_time(), 10) end
end
return redis.call('HGET', tree, 'h')
`;

async function main(): Promise<void> {
  const server = await startPrivateRedis();
  const redis = new Redis(server.url);
  try {
    const rows: string[] = [];
    const time = async (op: string, n: number) => {
      const started = process.hrtime.bigint();
      const height = await redis.eval(SCRIPT, 1, 'tree', op, String(n));
      const micros = Number(process.hrtime.bigint() - started) / 1e3 / n;
      rows.push(`| ${op} | ${n} | ${micros.toFixed(1)} | ${String(height)} |`);
    };
    await time('load', RECORDS);
    await time('count_below', N);
    await time('insert_counted+delete', N);
    await time('range_10', N);
    process.stdout.write(
      `${RECORDS} records, capacity ${CAPACITY}, load average ${loadAverage()}\n\n| operation | times | µs each | tree height |\n|---|---|---|---|\n${rows.join('\n')}\n`,
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

runMain(main);

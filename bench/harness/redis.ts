/** Redis helpers of the benchmarks: every run uses its own key prefix and removes it afterwards. */
import Redis from 'ioredis';

/** Deletes the keys of a prefix (SCAN + UNLINK, bounded by the key count). */
export async function dropRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 10_000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Redis's used memory, human-readable (INFO memory). */
export async function redisMemory(redisUrl: string): Promise<string> {
  const redis = new Redis(redisUrl);
  try {
    return /used_memory_human:(\S+)/.exec(await redis.info('memory'))?.[1] ?? '?';
  } finally {
    redis.disconnect();
  }
}

/** Redis helpers of the benchmarks: every run uses its own key prefix and removes it afterwards. */
import { spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './process';

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

/**
 * A Redis server of the benchmark's own (`redis-server` on a free loopback port, nothing saved),
 * for a CPU figure of Redis that no other user of the machine's Redis can inflate.
 */
export async function startPrivateRedis(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined); // refused until the server listens: connect() rejects, which is what is awaited
    try {
      await redis.connect();
      await redis.ping();
      break;
    } catch (error) {
      if (attempt >= 50 || child.exitCode !== null) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      redis.disconnect();
    }
  }
  return {
    url,
    pid: child.pid as number,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

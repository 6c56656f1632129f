import type Redis from 'ioredis';

/** Redis's answer to EVALSHA of a script it does not hold (a restart, SCRIPT FLUSH, a failover). */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}

/**
 * A Lua script by its SHA-1 (EVALSHA), so the text is not sent on every call; when Redis does not
 * hold it, once more with the text (EVAL), which also loads it for the next call. Only for scripts
 * that are safe to run twice in a row from one caller: the retry reaches Redis after any command
 * this caller sent in between.
 */
export async function runScript(
  redis: Redis,
  sha: string,
  source: string,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.eval(source, keys.length, ...keys, ...args);
  }
}

import { statfs } from 'node:fs/promises';

/** Free bytes (for an unprivileged process) of the file system holding `path`; null when it cannot be read. */
export async function freeBytes(path: string): Promise<number | null> {
  try {
    const stats = await statfs(path);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

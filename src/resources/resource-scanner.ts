import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ResourceKind, resourceKindOf, resourcePathProblem } from './resource-paths';

/** A file found under RESOURCE_DIR, with the stat the index compares against. */
export interface FoundFile {
  path: string;
  kind: ResourceKind;
  size: number;
  /** Modification time in nanoseconds since the epoch (exact, from a bigint stat). */
  mtimeNs: bigint;
}

export interface FileHashes {
  sha256: string;
  sha1: string | null;
}

export interface ResourceListing {
  files: FoundFile[];
  /** Relative paths left out, with the reason (names the index cannot represent). */
  skipped: Array<{ path: string; reason: string }>;
}

const STAT_BATCH = 500;
export const HASH_CONCURRENCY = 8;

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Lists `data/**`, `lang/**` and `packs/*.zip` under `root`. Only regular files and real
 * directories count: symbolic links are not followed (a link could point outside RESOURCE_DIR),
 * the three folders themselves included (a linked one is skipped, with a warning),
 * and names starting with "." (.git, .DS_Store) are left out. A missing root or sub-folder is
 * simply empty; a file deleted while the walk runs is left out; any other I/O error is thrown
 * so that a half-read folder never replaces a complete index.
 */
export async function listResourceFiles(root: string): Promise<ResourceListing> {
  const candidates: string[] = [];
  const skipped: ResourceListing['skipped'] = [];

  const walk = async (relativeDir: string, recursive: boolean): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(root, relativeDir), { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    const subdirectories: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const relative = `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (recursive) subdirectories.push(relative);
      } else if (entry.isFile()) {
        const problem = resourcePathProblem(relative);
        if (problem !== null) skipped.push({ path: relative, reason: `path ${problem}` });
        else if (resourceKindOf(relative) !== null) candidates.push(relative);
      }
    }
    await Promise.all(subdirectories.map((subdirectory) => walk(subdirectory, true)));
  };
  // readdir follows a link given as the folder itself: data/, lang/ or packs/ as a symbolic link
  // would be listed, then refused by the file route (outside RESOURCE_DIR once resolved).
  const top = async (folder: string, recursive: boolean): Promise<void> => {
    let info;
    try {
      info = await lstat(join(root, folder));
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    if (info.isSymbolicLink()) skipped.push({ path: folder, reason: 'a symbolic link (not followed)' });
    else await walk(folder, recursive);
  };
  await Promise.all([top('data', true), top('lang', true), top('packs', false)]);

  const files: FoundFile[] = [];
  for (let offset = 0; offset < candidates.length; offset += STAT_BATCH) {
    // Synchronous stats in small batches: about four times faster than one promise per file
    // (20,000 files: ~70 ms against ~300 ms), and the event loop is released between batches.
    if (offset > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const path of candidates.slice(offset, offset + STAT_BATCH)) {
      let info;
      try {
        info = statSync(join(root, path), { bigint: true });
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      if (!info.isFile()) continue;
      files.push({ path, kind: resourceKindOf(path) as ResourceKind, size: Number(info.size), mtimeNs: info.mtimeNs });
    }
  }
  return { files, skipped };
}

/** SHA-256 (and SHA-1 when asked) of a file, read as a stream in 1 MiB chunks; null when it is gone. */
export async function hashFile(absolutePath: string, withSha1: boolean): Promise<FileHashes | null> {
  const sha256 = createHash('sha256');
  const sha1 = withSha1 ? createHash('sha1') : null;
  try {
    for await (const chunk of createReadStream(absolutePath, { highWaterMark: 1 << 20 })) {
      sha256.update(chunk as Buffer);
      sha1?.update(chunk as Buffer);
    }
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  return { sha256: sha256.digest('hex'), sha1: sha1 ? sha1.digest('hex') : null };
}

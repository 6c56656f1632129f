import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** A small tmpfs mounted for a test: a file system that really fills up. */
export interface Tmpfs {
  readonly dir: string;
  /** Writes a file until the file system answers ENOSPC: every byte is taken. */
  fill(): void;
  /** Removes what fill() wrote: the space is back. */
  free(): void;
  unmount(): void;
}

/**
 * Why a tmpfs cannot be mounted here (not root, or mounting not permitted in this container), or
 * null when it can. The fault tests that need one skip with this message.
 */
export function tmpfsUnavailable(): string | null {
  if (process.platform !== 'linux') return `mount -t tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mount -t tmpfs needs root (CI runs the suite as root)';
  const probe = join('/tmp', `rhythmc-tmpfs-probe-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return `mount -t tmpfs is not permitted here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

export function mountTmpfs(dir: string, sizeMiB: number): Tmpfs {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'pipe' });
  const filler = join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        for (const size of [1 << 20, 4096, 512]) {
          const chunk = Buffer.alloc(size, 1);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      // Lazy: a file still open (a worker thread that ended) does not keep the mount.
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

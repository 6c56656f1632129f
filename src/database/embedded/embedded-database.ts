import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const WORKER_FILE = join(__dirname, 'pglite.worker.js');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** Data dirs this process has open: a second open would corrupt PGlite's files. */
const heldDirs = new Set<string>();

export class EmbeddedDatabaseLockedError extends Error {}

/**
 * The embedded PostgreSQL (PGlite) used when DATABASE_URL is unset. It runs in a worker
 * thread behind pglite-socket, so the app reaches it with the same `pg` driver and the same
 * migrations as a real PostgreSQL. The data dir is locked by a pid file.
 */
export class EmbeddedDatabase {
  private stopped = false;

  private constructor(
    private readonly worker: Worker,
    private readonly lockFile: string,
    private readonly dataDir: string,
    readonly url: string,
  ) {}

  static async start(dataDir: string, maxConnections = 10): Promise<EmbeddedDatabase> {
    mkdirSync(dataDir, { recursive: true });
    const lockFile = join(dataDir, 'pglite.lock');
    acquireLock(dataDir, lockFile);
    try {
      const worker = new Worker(WORKER_FILE, { workerData: { pgdataDir: join(dataDir, 'pgdata'), maxConnections } });
      const port = await waitForReady(worker);
      // user/db names are ignored by PGlite; sslmode off because the socket is loopback only.
      return new EmbeddedDatabase(
        worker,
        lockFile,
        dataDir,
        `postgresql://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
      );
    } catch (error) {
      releaseLock(dataDir, lockFile);
      throw error;
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
        this.worker.once('message', () => {
          clearTimeout(timer);
          resolve();
        });
        this.worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        this.worker.postMessage({ type: 'stop' });
      });
      await this.worker.terminate();
    } finally {
      releaseLock(this.dataDir, this.lockFile);
    }
  }
}

function waitForReady(worker: Worker): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`The embedded database did not start within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    worker.once('message', (message: { type: string; port?: number; message?: string }) => {
      clearTimeout(timer);
      if (message.type === 'ready' && typeof message.port === 'number') {
        resolve(message.port);
      } else {
        void worker.terminate();
        reject(new Error(`The embedded database failed to start: ${message.message ?? 'unknown error'}`));
      }
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function acquireLock(dataDir: string, lockFile: string): void {
  if (heldDirs.has(dataDir)) {
    throw new EmbeddedDatabaseLockedError(`The embedded database in ${dataDir} is already open in this process`);
  }
  if (existsSync(lockFile)) {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new EmbeddedDatabaseLockedError(
        `The embedded database in ${dataDir} is in use by process ${pid}; stop it or choose another DATA_DIR`,
      );
    }
    // A stale lock of a process that died (SIGKILL): take it over.
    rmSync(lockFile, { force: true });
  }
  const fd = openSync(lockFile, 'wx');
  writeSync(fd, String(process.pid));
  closeSync(fd);
  heldDirs.add(dataDir);
}

function releaseLock(dataDir: string, lockFile: string): void {
  heldDirs.delete(dataDir);
  rmSync(lockFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

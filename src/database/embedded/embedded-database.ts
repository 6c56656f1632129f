import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { freeBytes } from '../../common/free-space';

const WORKER_FILE = join(__dirname, 'pglite.worker.js');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
/** A worker that is ended must be gone within this, or the process cannot recover it. */
const TERMINATE_TIMEOUT_MS = 10_000;
/** Between two restart attempts: doubling from the first, up to the last. */
const RESTART_DELAYS_MS = [500, 5_000];
/**
 * A restart is not tried while the data dir's file system has less free than this: PostgreSQL's
 * crash recovery needs room for a WAL segment (16 MiB) and its checkpoint. Free space is looked at
 * every RESTART_SPACE_POLL_MS, so the database is back within a moment of the space.
 */
const RESTART_FREE_BYTES = 24 * 2 ** 20;
const RESTART_SPACE_POLL_MS = 250;
const PING_EVERY_MS = 5_000;

/** Data dirs this process has open: a second open would corrupt PGlite's files. */
const heldDirs = new Set<string>();

export class EmbeddedDatabaseLockedError extends Error {}

/** The embedded database could not do what was asked because it is down or restarting. */
export class EmbeddedDatabaseDownError extends Error {}

export interface EmbeddedDatabaseLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface EmbeddedDatabaseOptions {
  /** Connections pglite-socket accepts. */
  maxConnections?: number;
  /** A restore: the data dir is written from this tar of one (embedded-restore.ts) at the first start. */
  loadDataDir?: Uint8Array;
  /** How long restarts of a database that stopped are tried before onFatal (default 60 s). */
  recoveryMs?: number;
  log?: EmbeddedDatabaseLog;
  /** The database stopped and could not be started again in this process within recoveryMs. */
  onFatal?: (error: Error) => void;
}

const SILENT: EmbeddedDatabaseLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The embedded PostgreSQL (PGlite) used when DATABASE_URL is unset. It runs in a worker
 * thread behind pglite-socket, so the app reaches it with the same `pg` driver and the same
 * migrations as a real PostgreSQL. The data dir is locked by a pid file.
 *
 * Supervised (docs/decisions.md "Embedded database"): PGlite runs one backend; after a FATAL or
 * PANIC (a WAL segment that cannot be created on a full disk) that backend has exited and the next
 * call into it never returns. The worker reports it (or any exception of PGlite, or its own exit,
 * or a thread that answers no ping for `watchForHangs`'s time), and the database is started again
 * in a new worker on the same port, from the same data dir (PostgreSQL's crash recovery replays the
 * WAL), retried until it starts; the pool's connections are closed meanwhile, so calls answer 503
 * at once. When it cannot be started within `recoveryMs` (the disk is still full) or the old thread
 * does not end, `onFatal` is called: the service exits non-zero and its orchestrator restarts it.
 */
export class EmbeddedDatabase {
  readonly url: string;
  private state: 'running' | 'restarting' | 'failed' | 'stopped' = 'running';
  /** The restart under way: stop() waits for it before it lets go of the data dir's lock. */
  private restarting: Promise<void> | null = null;
  private worker: Worker;
  private readonly port: number;
  private lastPong = Date.now();
  private pinger: NodeJS.Timeout | null = null;
  private backups = new Map<number, { resolve: (data: Uint8Array) => void; reject: (error: Error) => void }>();
  private nextBackupId = 1;

  private constructor(
    started: { worker: Worker; port: number },
    private readonly password: string,
    private readonly lockFile: string,
    private readonly dataDir: string,
    private readonly options: Required<Pick<EmbeddedDatabaseOptions, 'maxConnections' | 'recoveryMs' | 'log'>> &
      Pick<EmbeddedDatabaseOptions, 'onFatal'>,
  ) {
    this.worker = started.worker;
    this.port = started.port;
    // user/db names are ignored by PGlite; sslmode off because the socket is loopback only. The
    // password is this start's secret: the worker refuses every client without it.
    this.url = `postgresql://postgres:${password}@127.0.0.1:${started.port}/postgres?sslmode=disable`;
    this.supervise(this.worker);
  }

  /** `maxConnections` alone (a number) is the older form of the options. */
  static async start(dataDir: string, options: EmbeddedDatabaseOptions | number = {}): Promise<EmbeddedDatabase> {
    const settings = typeof options === 'number' ? { maxConnections: options } : options;
    mkdirSync(dataDir, { recursive: true });
    const lockFile = join(dataDir, 'pglite.lock');
    acquireLock(dataDir, lockFile);
    const full = {
      maxConnections: settings.maxConnections ?? 10,
      recoveryMs: settings.recoveryMs ?? 60_000,
      log: settings.log ?? SILENT,
      onFatal: settings.onFatal,
    };
    // Random per start, kept in memory only (docs/decisions.md "Embedded database: only the service connects").
    const password = randomBytes(24).toString('base64url');
    try {
      const started = await startWorker(dataDir, full.maxConnections, 0, password, settings.loadDataDir);
      return new EmbeddedDatabase(started, password, lockFile, dataDir, full);
    } catch (error) {
      releaseLock(dataDir, lockFile);
      throw error;
    }
  }

  /** Up and answering (false while it is being started again after a failure). */
  get running(): boolean {
    return this.state === 'running';
  }

  /**
   * From now on, a worker thread that answers no ping for `hangMs` counts as stopped (PGlite runs
   * each statement synchronously in it, so a single statement that long is taken for a hang). Not
   * during start-up: migrations may hold it longer.
   */
  watchForHangs(hangMs: number): void {
    if (this.pinger) clearInterval(this.pinger);
    this.lastPong = Date.now();
    this.pinger = setInterval(
      () => {
        if (this.state !== 'running') return;
        if (Date.now() - this.lastPong > hangMs) {
          this.recover(`its thread answered nothing for ${Math.round((Date.now() - this.lastPong) / 1000)} s`);
          return;
        }
        this.worker.postMessage({ type: 'ping' });
      },
      Math.min(PING_EVERY_MS, hangMs),
    );
    this.pinger.unref();
  }

  /**
   * A consistent copy of the data dir while it serves: a gzipped tarball that `restoreEmbeddedBackup`
   * (src/database/embedded/embedded-restore.ts) turns into a fresh data dir. Taken inside the
   * worker between two statements (pglite.worker.js `backup`); statements wait meanwhile.
   */
  backup(): Promise<Uint8Array> {
    if (this.state !== 'running')
      return Promise.reject(new EmbeddedDatabaseDownError('The embedded database is restarting'));
    const id = this.nextBackupId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      this.backups.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'backup', id });
    });
  }

  /** A backup asked of a worker that then stopped never gets its answer: it fails instead. */
  private failBackups(reason: string): void {
    const pending = [...this.backups.values()];
    this.backups.clear();
    for (const backup of pending)
      backup.reject(new EmbeddedDatabaseDownError(`The embedded database stopped (${reason})`));
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    const failed = this.state !== 'running';
    this.state = 'stopped';
    if (this.pinger) clearInterval(this.pinger);
    this.failBackups('the service is stopping');
    try {
      // A restart sees the state at its next step and ends; a worker it is starting is ended by it.
      await this.restarting;
    } catch {
      // restart() does not throw; nothing to wait for.
    }
    const worker = this.worker;
    try {
      if (!failed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          worker.on('message', (message: { type?: string }) => {
            if (message?.type === 'stopped') done();
          });
          worker.once('exit', done);
          worker.postMessage({ type: 'stop' });
        });
      }
      await worker.terminate();
    } finally {
      releaseLock(this.dataDir, this.lockFile);
    }
  }

  private supervise(worker: Worker): void {
    this.lastPong = Date.now();
    worker.on(
      'message',
      (message: { type?: string; reason?: string; id?: number; data?: Uint8Array; error?: string }) => {
        if (worker !== this.worker) return;
        if (message?.type === 'pong') this.lastPong = Date.now();
        if (message?.type === 'backup' && typeof message.id === 'number') {
          const pending = this.backups.get(message.id);
          this.backups.delete(message.id);
          if (message.data) pending?.resolve(message.data);
          else pending?.reject(new EmbeddedDatabaseDownError(`The backup failed: ${message.error ?? 'unknown error'}`));
        }
        if (message?.type === 'failed') this.recover(message.reason ?? 'it failed');
      },
    );
    worker.on('error', (error) => {
      if (worker === this.worker) this.recover(`its thread failed: ${error.message}`);
    });
    worker.on('exit', (code) => {
      if (worker === this.worker) this.recover(`its thread exited with ${code}`);
    });
  }

  /** Starts the database again on the same port; onFatal when it cannot within recoveryMs. */
  private recover(reason: string): void {
    if (this.state !== 'running') return;
    this.state = 'restarting';
    this.options.log.error(`The embedded database stopped (${reason}); starting it again`);
    this.failBackups(reason);
    this.restarting = this.restart(Date.now()).finally(() => {
      this.restarting = null;
    });
  }

  private async restart(since: number): Promise<void> {
    const old = this.worker;
    const ended = await Promise.race([
      old.terminate().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), TERMINATE_TIMEOUT_MS).unref()),
    ]);
    if (!ended) return this.fail(new Error('the embedded database thread did not end'));
    for (let attempt = 1, delay = RESTART_DELAYS_MS[0]; ; attempt++) {
      if (this.state !== 'restarting') return;
      const room = await this.waitForRoom(since);
      // Stopped while it waited: no start on a data dir whose lock stop() is about to release.
      if (this.state !== 'restarting') return;
      if (room !== null) return this.fail(new Error(room));
      try {
        const started = await startWorker(this.dataDir, this.options.maxConnections, this.port, this.password);
        if (this.state !== 'restarting') {
          await started.worker.terminate();
          return;
        }
        this.worker = started.worker;
        this.supervise(started.worker);
        this.state = 'running';
        this.options.log.info(`Embedded database started again in ${Date.now() - since} ms (attempt ${attempt})`);
        return;
      } catch (error) {
        const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
        if (Date.now() - since + delay > this.options.recoveryMs) {
          return this.fail(
            new Error(
              `the embedded database could not be started again within ${this.options.recoveryMs / 1000} s (${message})`,
            ),
          );
        }
        if (attempt === 1) this.options.log.warn(`The embedded database did not start (${message}); trying again`);
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, RESTART_DELAYS_MS[1]);
      }
    }
  }

  /** Waits until the data dir has room for a start (null), or says why it did not come within recoveryMs. */
  private async waitForRoom(since: number): Promise<string | null> {
    for (let logged = false; this.state === 'restarting';) {
      const free = await freeBytes(this.dataDir);
      if (free === null || free >= RESTART_FREE_BYTES) return null;
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
      if (Date.now() - since + RESTART_SPACE_POLL_MS > this.options.recoveryMs)
        return `the embedded database could not be started again within ${this.options.recoveryMs / 1000} s: ${this.dataDir} has ${mib(free)} MiB free, it needs ${mib(RESTART_FREE_BYTES)}`;
      if (!logged) {
        logged = true;
        this.options.log.warn(
          `The embedded database waits for free space to start again: ${this.dataDir} has ${mib(free)} MiB free, it needs ${mib(RESTART_FREE_BYTES)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, RESTART_SPACE_POLL_MS).unref());
    }
    return null;
  }

  private fail(error: Error): void {
    if (this.state !== 'restarting') return;
    this.state = 'failed';
    this.options.log.error(`${error.message}; the process must be restarted`);
    this.options.onFatal?.(error);
  }
}

async function startWorker(
  dataDir: string,
  maxConnections: number,
  port: number,
  password: string,
  loadDataDir?: Uint8Array,
): Promise<{ worker: Worker; port: number }> {
  const worker = new Worker(WORKER_FILE, {
    workerData: { pgdataDir: join(dataDir, 'pgdata'), maxConnections, port, password, loadDataDir },
  });
  return { worker, port: await waitForReady(worker) };
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

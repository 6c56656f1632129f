import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's PostgreSQL 15 binaries (apt package postgresql-15); PG_BIN overrides. */
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** initdb and pg_ctl refuse to run as root: as root, they run as this user. */
const SERVER_USER = 'postgres';

/**
 * A PostgreSQL cluster of its own, on its own port and data dir, that a fault test or benchmark
 * stops and starts for real (pg_ctl) without touching the shared server on 5432. Trust
 * authentication on 127.0.0.1 only; the data dir is removed by destroy().
 */
export class PrivatePostgres {
  private constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly root: string,
    private readonly asUser: string | null,
  ) {}

  /** Why no private cluster can be made here (binaries missing), or null. */
  static unavailable(): string | null {
    for (const binary of ['initdb', 'pg_ctl', 'pg_basebackup'])
      if (!existsSync(join(BIN, binary)))
        return `${join(BIN, binary)} is missing (apt install postgresql-15, or PG_BIN)`;
    return null;
  }

  /**
   * initdb in `root`/data (a fresh directory under the system's temporary dir unless `root` is
   * given: a benchmark keeps its generated data there, and a cluster already in it is reused), then
   * start on a free port. `settings`: extra server settings (`-c name=value`).
   */
  static async create(options: { root?: string; settings?: Record<string, string> } = {}): Promise<PrivatePostgres> {
    const asUser = userInfo().uid === 0 ? SERVER_USER : null;
    const root = options.root ?? mkdtempSync(join(tmpdir(), 'rhythmc-pg-'));
    mkdirSync(root, { recursive: true });
    const cluster = new PrivatePostgres(join(root, 'data'), await freePort(), root, asUser);
    if (asUser) await cluster.exec('chown', [`${asUser}:`, root], false);
    if (!existsSync(join(cluster.dataDir, 'PG_VERSION'))) {
      await cluster.exec(join(BIN, 'initdb'), [
        '-D',
        cluster.dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--no-sync',
      ]);
    }
    // A server left running by an interrupted run of the same directory: stopped first.
    if (existsSync(join(cluster.dataDir, 'postmaster.pid'))) await cluster.stop('fast').catch(() => undefined);
    cluster.settings = {
      listen_addresses: '127.0.0.1',
      port: String(cluster.port),
      unix_socket_directories: "''",
      ...options.settings,
    };
    await cluster.start();
    return cluster;
  }

  /**
   * A hot standby of `primary` streaming from it (pg_basebackup -R: a base backup with
   * standby.signal and primary_conninfo), in a fresh directory, started on a port of its own.
   * initdb's pg_hba.conf lets `replication` connect from 127.0.0.1 with the cluster's auth (trust).
   */
  static async standbyOf(
    primary: PrivatePostgres,
    options: { settings?: Record<string, string> } = {},
  ): Promise<PrivatePostgres> {
    const root = mkdtempSync(join(tmpdir(), 'rhythmc-pg-standby-'));
    const standby = new PrivatePostgres(join(root, 'data'), await freePort(), root, primary.asUser);
    if (standby.asUser) await standby.exec('chown', [`${standby.asUser}:`, root], false);
    await standby.exec(join(BIN, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      standby.dataDir,
      '-R',
      '-X',
      'stream',
      '--checkpoint=fast',
      '--no-sync',
    ]);
    standby.settings = {
      listen_addresses: '127.0.0.1',
      port: String(standby.port),
      unix_socket_directories: "''",
      hot_standby: 'on',
      ...options.settings,
    };
    await standby.start();
    return standby;
  }

  private settings: Record<string, string> = {};

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** pg_ctl start, waiting until it accepts connections. */
  async start(): Promise<void> {
    const options = Object.entries(this.settings)
      .map(([name, value]) => `-c ${name}=${value}`)
      .join(' ');
    await this.exec(join(BIN, 'pg_ctl'), [
      'start',
      '-w',
      '-t',
      '60',
      '-D',
      this.dataDir,
      '-l',
      join(this.dataDir, 'server.log'),
      '-o',
      options,
    ]);
  }

  /**
   * pg_ctl stop: `fast` (what a service manager's stop does: sessions are ended, transactions in
   * flight rolled back, a shutdown checkpoint) or `immediate` (a crash: recovery at the next start).
   */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.exec(join(BIN, 'pg_ctl'), ['stop', '-w', '-t', '60', '-m', mode, '-D', this.dataDir]);
  }

  /** Stops the server (if it runs) and removes its directory unless `keep`. */
  async destroy(options: { keep?: boolean } = {}): Promise<void> {
    await this.stop(options.keep ? 'fast' : 'immediate').catch(() => undefined);
    if (!options.keep) rmSync(this.root, { recursive: true, force: true });
  }

  private async exec(file: string, args: string[], asServerUser = true): Promise<void> {
    const [command, argv] =
      asServerUser && this.asUser ? ['runuser', ['-u', this.asUser, '--', file, ...args]] : [file, args];
    try {
      await run(command, argv, { timeout: 120_000 });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${file} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`);
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RUN_ID_VAR, TEST_TMP_ROOT } from '../setup/test-env';

/**
 * A private `redis-server` on a free port, which a test can kill (SIGKILL) and start again on the
 * same port: a real Redis fault, not a proxy. No persistence unless the test asks for a SAVE: the
 * server runs with `--save "" --appendonly no` in a directory of its own, and a restart loads the
 * `dump.rdb` a SAVE left there (how a Redis with RDB snapshots comes back with older data).
 */
export class RedisServer {
  private process: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<RedisServer> {
    const dir = join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] ?? 'run', `redis-${randomBytes(4).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    const server = new RedisServer(await freePort(), dir);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Kills the server at once (SIGKILL: no save, connections reset) and waits until it has exited. */
  async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts the server again on the same port and directory; resolves once it accepts connections. */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.process = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start on ${this.port}: ${output}`)),
        20_000,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
    // Running: its output is no longer kept (it would grow with the test).
    child.stdout?.removeAllListeners('data').resume();
    child.stderr?.removeAllListeners('data').resume();
    child.removeAllListeners('exit');
  }
}

/** A port nothing listens on now (the OS's choice for port 0). */
async function freePort(): Promise<number> {
  const server = createServer((socket: Socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

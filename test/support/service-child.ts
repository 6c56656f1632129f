import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { TS_REGISTER } from './source-script';

export interface ServiceChild {
  readonly process: ChildProcess;
  readonly port: number;
  /** The database the service uses (the embedded one's loopback URL without DATABASE_URL). */
  readonly databaseUrl: string;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** What the process wrote to stderr (for failure messages). */
  stderr(): string;
}

/** A service process that is starting: what a test needs to act at a given point of its start-up. */
export interface StartingServiceChild {
  readonly process: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with the service's port and database URL once it listens (rejects if it exits first). */
  readonly listening: Promise<{ port: number; databaseUrl: string }>;
  /** Resolves once a line of stdout (the log, with LOG_LEVEL info or lower) matches; rejects if the process exits first. */
  line(pattern: RegExp): Promise<string>;
  /** Resolves once the process handles SIGTERM/SIGINT itself (test/support/signals-caught.ts), before the service's modules load. */
  catchesSignals(): Promise<void>;
  stdout(): string;
  stderr(): string;
}

/**
 * Starts the service in its own process (test/support/service-process.ts) with `env`; does not wait.
 * `wrapper`: a command that runs node as its own child (e.g. `unshare --pid --fork --mount-proc`);
 * the IPC channel and the pipes go through it to node.
 */
export function spawnServiceChild(env: Record<string, string>, wrapper: string[] = []): StartingServiceChild {
  const nodeArgs = ['-r', TS_REGISTER];
  const child = fork(join(__dirname, 'service-process.ts'), [], {
    ...(wrapper.length > 0
      ? { execPath: wrapper[0], execArgv: [...wrapper.slice(1), process.execPath, ...nodeArgs] }
      : { execArgv: nodeArgs }),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stdout = '';
  let stderr = '';
  const waiting = new Set<() => void>();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const check of waiting) check();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const exitedEarly = (what: string) =>
    exited.then((code) => {
      throw new Error(`the service process exited with ${code} before ${what}: ${stderr}`);
    });
  let catching = false;
  const listening = Promise.race([
    new Promise<{ port: number; databaseUrl: string }>((resolve, reject) =>
      child.on('message', (message: { type?: string; port?: number; databaseUrl?: string }) => {
        if (message.type === 'catching-signals') {
          catching = true;
          for (const check of waiting) check();
        } else if (typeof message.port === 'number' && typeof message.databaseUrl === 'string')
          resolve({ port: message.port, databaseUrl: message.databaseUrl });
        else reject(new Error(`bad message ${JSON.stringify(message)}`));
      }),
    ),
    exitedEarly('listening'),
  ]);
  // Whoever does not wait for it must not see an unhandled rejection.
  listening.catch(() => undefined);
  const line = (pattern: RegExp) =>
    Promise.race([
      new Promise<string>((resolve) => {
        const check = () => {
          const found = stdout.split('\n').find((text) => pattern.test(text));
          if (found === undefined) return;
          waiting.delete(check);
          resolve(found);
        };
        waiting.add(check);
        check();
      }),
      exitedEarly(`a line matching ${pattern}`),
    ]);
  const catchesSignals = () =>
    Promise.race([
      new Promise<void>((resolve) => {
        const check = () => {
          if (!catching) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
      exitedEarly('catching signals'),
    ]);
  return { process: child, exited, listening, line, catchesSignals, stdout: () => stdout, stderr: () => stderr };
}

/** Starts the service in its own process (test/support/service-process.ts) with `env`, and waits for its port. */
export async function startServiceChild(env: Record<string, string>): Promise<ServiceChild> {
  const child = spawnServiceChild(env);
  const { port, databaseUrl } = await child.listening;
  return { process: child.process, port, databaseUrl, exited: child.exited, stderr: () => child.stderr() };
}

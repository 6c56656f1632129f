import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

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

/** Starts the service in its own process (test/support/service-process.ts) with `env`, and waits for its port. */
export async function startServiceChild(env: Record<string, string>): Promise<ServiceChild> {
  const child = fork(join(__dirname, 'service-process.ts'), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    env: { ...process.env, ...env, TS_NODE_PROJECT: join(__dirname, '..', '..', 'tsconfig.json') },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const { port, databaseUrl } = await new Promise<{ port: number; databaseUrl: string }>((resolve, reject) => {
    child.once('message', (message: { port?: number; databaseUrl?: string }) =>
      typeof message.port === 'number' && typeof message.databaseUrl === 'string'
        ? resolve({ port: message.port, databaseUrl: message.databaseUrl })
        : reject(new Error('bad message')),
    );
    void exited.then((code) =>
      reject(new Error(`the service process exited with ${code} before listening: ${stderr}`)),
    );
  });
  return { process: child, port, databaseUrl, exited, stderr: () => stderr };
}

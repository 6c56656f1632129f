import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * `node -r TS_REGISTER file.ts` runs a TypeScript entry point from its source, transpiled once and
 * kept (scripts/ts-register.js).
 */
export const TS_REGISTER = join(ROOT, 'scripts', 'ts-register.js');

export interface ScriptResult {
  /** The exit code (-1 when the process was killed, e.g. by the timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * An entry point of src/ (`src/main.ts`, `src/cli/migrate.ts`) in a process of its own, from its
 * TypeScript source, with only PATH and `env` in its environment; resolves when it exits.
 */
export function runSourceScript(script: string, args: string[], env: Record<string, string>): Promise<ScriptResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', TS_REGISTER, script, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}

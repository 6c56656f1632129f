import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { INHERIT_TEMPLATE_VAR, RUN_ID_VAR } from '../setup/test-env';

/**
 * `npm test` on a machine without a working Chromium: the console suite fails with one clear
 * message and jest ends, instead of leaving the service it started running (jest then never
 * exited). Runs the real suite in a child jest, on the same database set-up as this run.
 */
const ROOT = join(__dirname, '..', '..');

/** A hang guard, not a measurement: the child ends in well under a minute when nothing leaks. */
const HANG_GUARD_MS = 240_000;

interface ChildRun {
  code: number | null;
  output: string;
  /** Still running at the guard: killed. */
  hung: boolean;
}

function runConsoleSuite(chromiumPath: string, file = 'test/e2e/console.e2e-spec.ts'): Promise<ChildRun> {
  // The child jest copies this run's template (no migration of its own) and drops its own databases.
  const env: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: chromiumPath, [INHERIT_TEMPLATE_VAR]: '1' };
  for (const name of [RUN_ID_VAR, 'JEST_WORKER_ID']) delete env[name];
  const child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), file, '-t', 'strict CSP', '--runInBand'],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    let hung = false;
    const guard = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_GUARD_MS);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, output, hung });
    });
  });
}

describe('Console suite without a working Chromium', () => {
  it.each([
    [
      'missing',
      '/nonexistent/chromium',
      'No Chromium at /nonexistent/chromium: apt-get install -y chromium (or set CHROMIUM_PATH)',
    ],
    [
      'not a browser',
      '/bin/false',
      'Chromium at /bin/false did not start (apt-get install -y chromium, or set CHROMIUM_PATH): ',
    ],
  ])(
    '%s: the suite fails naming CHROMIUM_PATH, closes the service it started, and jest exits',
    async (_label, chromiumPath, message) => {
      const run = await runConsoleSuite(chromiumPath);
      expect({ hung: run.hung, code: run.code }).toEqual({ hung: false, code: 1 });
      expect(run.output).toContain(message);
      expect(run.output).toMatch(/Tests: +1 failed, \d+ skipped, \d+ total/);
      expect(run.output).not.toContain('did not exit');
    },
    HANG_GUARD_MS + 30_000,
  );

  it(
    "the leaderboard site's suite (the same start-up): fails naming CHROMIUM_PATH, closes its service, and jest exits",
    async () => {
      const run = await runConsoleSuite('/nonexistent/chromium', 'test/e2e/site.e2e-spec.ts');
      expect({ hung: run.hung, code: run.code }).toEqual({ hung: false, code: 1 });
      expect(run.output).toContain(
        'No Chromium at /nonexistent/chromium: apt-get install -y chromium (or set CHROMIUM_PATH)',
      );
      expect(run.output).toMatch(/Tests: +1 failed, \d+ skipped, \d+ total/);
      expect(run.output).not.toContain('did not exit');
    },
    HANG_GUARD_MS + 30_000,
  );
});

import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/app-config';
import { TS_REGISTER } from '../support/source-script';
import { freshDatabase, TestDatabase } from '../support/test-app';

/**
 * The README's quick start as a newcomer runs it: `.env.example` read by `node --env-file`, a
 * `.env` made by the README's own commands starting the service with the admin API on, and an
 * install that reports nothing to anyone (docs/decisions.md "Configuration" and "Build").
 */
const ROOT = join(__dirname, '..', '..');
const EXAMPLE = readFileSync(join(ROOT, '.env.example'), 'utf8');
const run = promisify(execFile);

/** A guard against a child that never gets there, not a measurement. */
const START_GUARD_MS = 120_000;

/** What `node --env-file=<file>` puts in an otherwise empty environment. */
async function readByNode(file: string): Promise<Record<string, string>> {
  const { stdout } = await run(
    process.execPath,
    [`--env-file=${file}`, '-e', 'process.stdout.write(JSON.stringify(process.env))'],
    { env: {} },
  );
  return JSON.parse(stdout) as Record<string, string>;
}

/** The shell lines of the README's quick start (its first bash block), without comments. */
function quickStartLines(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /^## Quick start\n[\s\S]*?```bash\n([\s\S]*?)```/m.exec(readme);
  if (!block) throw new Error('README.md has no "## Quick start" with a bash block');
  return block[1]
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '');
}

describe('Quick start', () => {
  it('reads every line of .env.example under node --env-file as written, and it is the default configuration', async () => {
    const written = new Map<string, string>();
    for (const line of EXAMPLE.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      expect({ line, form: match ? 'NAME=value' : 'other' }).toEqual({ line, form: 'NAME=value' });
      written.set(match![1], match![2]);
    }
    expect(written.size).toBeGreaterThan(30);
    const loaded = await readByNode(join(ROOT, '.env.example'));
    expect(loaded).toEqual(Object.fromEntries(written));
    // Empty values count as unset: the file gives what an empty environment gives.
    expect(loadConfig(loaded)).toEqual(loadConfig({}));
  });

  describe("the README's commands", () => {
    let dir: string;
    let database: TestDatabase;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rhythmc-quick-start-'));
      database = await freshDatabase();
    });
    afterAll(async () => {
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('make a .env with a fresh ADMIN_TOKEN, and node --env-file=.env starts the service with the admin API on', async () => {
      const lines = quickStartLines();
      expect(lines).toEqual([
        'cp .env.example .env',
        expect.stringMatching(/^sed -i "s\/\^ADMIN_TOKEN=/),
        'npm install',
        'node --env-file=.env dist/src/main.js',
      ]);
      copyFileSync(join(ROOT, '.env.example'), join(dir, '.env.example'));
      await run('bash', ['-euc', `${lines[0]}\n${lines[1]}`], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
      const dotEnv = readFileSync(join(dir, '.env'), 'utf8');
      const token = /^ADMIN_TOKEN=(.*)$/m.exec(dotEnv)![1];
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect(dotEnv.replace(/^ADMIN_TOKEN=.*$/m, 'ADMIN_TOKEN=')).toBe(EXAMPLE);

      // The last line, on the TypeScript sources (dist/ may be older than the code under test) and
      // a test database. The variables set here win over .env, as the README says; ADMIN_TOKEN
      // comes from .env alone.
      const child = spawn(process.execPath, ['--env-file=.env', '-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          HOST: '127.0.0.1',
          PORT: '0',
          RESOURCE_DIR: join(dir, 'resources'),
          ...database.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      try {
        const port = await new Promise<number>((resolve, reject) => {
          const guard = setTimeout(() => reject(new Error(`no "listening on" line:\n${output}`)), START_GUARD_MS);
          const read = (chunk: Buffer) => {
            output += chunk.toString();
            const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
            if (listening) {
              clearTimeout(guard);
              resolve(Number(listening[1]));
            }
          };
          child.stdout.on('data', read);
          child.stderr.on('data', read);
          void exited.then((code) => reject(new Error(`the service exited (${code}):\n${output}`)));
        });
        const overview = (bearer: string) =>
          fetch(`http://127.0.0.1:${port}/admin/overview`, { headers: { Authorization: `Bearer ${bearer}` } });
        const ok = await overview(token);
        expect(ok.status).toBe(200);
        expect(await ok.json()).toMatchObject({ serversOnline: 0, playersOnline: 0 });
        const wrong = await overview('0'.repeat(48));
        expect(wrong.status).toBe(401);
        expect(await wrong.json()).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
        expect(output).toContain('admin API on');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  });

  describe('installing sends nothing anywhere', () => {
    /**
     * @scarf/scarf's postinstall (report.js, pulled in by swagger-ui-dist), run for real except
     * for one step: the dependency tree it reads from `npm ls --json --long` under a 3 s timeout
     * is read here without one and handed to its own parser. SCARF_LOCAL_PORT, which report.js
     * honours, points it at a loopback stand-in for scarf.sh that records every request.
     */
    async function report(tree: unknown): Promise<{ outcome: string; requests: string[] }> {
      const requests: string[] = [];
      const standIn = createServer((request, response) => {
        requests.push(`${request.method} ${request.url}`);
        request.resume();
        response.end();
      });
      await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
      const scratch = mkdtempSync(join(tmpdir(), 'rhythmc-scarf-'));
      try {
        writeFileSync(join(scratch, 'tree.json'), JSON.stringify(tree));
        const script = [
          'const report = require(process.env.REPORT_JS);',
          "const tree = require('node:fs').readFileSync(process.env.TREE_JSON, 'utf8');",
          'report.getDependencyInfo = () => new Promise((resolve, reject) =>',
          "  report.processDependencyTreeOutput(resolve, reject)(null, tree, ''));",
          // (report.js prints its notice on stdout; the outcome goes to a file of its own.)
          "const done = (outcome) => require('node:fs').writeFileSync(process.env.OUTCOME, outcome);",
          "report.reportPostInstall().then(() => done('sent'), (error) => done(error.message));",
        ].join('\n');
        await run(process.execPath, ['-e', script], {
          cwd: join(ROOT, 'node_modules', '@scarf', 'scarf'),
          // No SCARF_ANALYTICS / DO_NOT_TRACK from this machine: only the package.json decides.
          env: {
            PATH: process.env.PATH ?? '',
            INIT_CWD: ROOT,
            TMPDIR: scratch,
            SCARF_LOCAL_PORT: String((standIn.address() as AddressInfo).port),
            REPORT_JS: join(ROOT, 'node_modules', '@scarf', 'scarf', 'report.js'),
            TREE_JSON: join(scratch, 'tree.json'),
            OUTCOME: join(scratch, 'outcome'),
          },
        });
        return { outcome: readFileSync(join(scratch, 'outcome'), 'utf8'), requests };
      } finally {
        await new Promise((resolve) => standIn.close(resolve));
        rmSync(scratch, { recursive: true, force: true });
      }
    }

    it("@scarf/scarf's report.js sends nothing with the project's package.json (and would without its scarfSettings)", async () => {
      const { stdout } = await run('npm', ['ls', '@scarf/scarf', '--json', '--long'], {
        cwd: ROOT,
        maxBuffer: 1 << 28,
      });
      const tree = JSON.parse(stdout) as Record<string, unknown>;
      expect(tree.scarfSettings).toEqual({ enabled: false });
      expect(await report(tree)).toEqual({
        outcome: 'Scarf has been disabled via a package.json in the dependency chain.',
        requests: [],
      });
      const { scarfSettings: _dropped, ...withoutSetting } = tree;
      expect(await report(withoutSetting)).toEqual({ outcome: 'sent', requests: ['POST /package-event/install'] });
    });
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpClient } from '../support/http';
import { spawnServiceChild, StartingServiceChild } from '../support/service-child';
import { ADMIN_TOKEN, freshDatabase, TestDatabase, testServiceEnv } from '../support/test-app';
import { testDatabaseServerUrl } from '../setup/test-env';
import { eventually, sleep } from '../support/wait';

/**
 * The service as PID 1 (docs/decisions.md "Signals at any time"). In a container the first process
 * of a new PID namespace gets no default signal action: a SIGTERM it has no handler for is
 * dropped, not fatal. The image runs node under tini, which forwards signals; this checks that and,
 * with no Docker daemon here, that node itself stops cleanly on SIGTERM as PID 1 of a real PID
 * namespace (`unshare --pid --fork --mount-proc`, as root), once it handles signals during start-up
 * and once it listens, so the service does not depend on tini to stop.
 */
const UNSHARE = ['unshare', '--pid', '--fork', '--mount-proc'];
const onPostgres = testDatabaseServerUrl() !== null;

/** Why a PID namespace cannot be made here (unshare missing, or not permitted: needs root), or null. */
function unshareRefusal(): string | null {
  const probe = spawnSync(UNSHARE[0], [...UNSHARE.slice(1), 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return probe.error.message;
  if (probe.status !== 0) return (probe.stderr || `exit ${probe.status}`).trim();
  return null;
}
const refusal = unshareRefusal();

/** The host pid of the process unshare forked: PID 1 of the new namespace (checked through its NSpid). */
async function pid1Of(unsharePid: number): Promise<number> {
  let pid = 0;
  await eventually(
    () => {
      const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim();
      pid = Number(children.split(' ')[0] || 0);
      return pid > 0;
    },
    'unshare forked the namespace init',
    10_000,
  );
  // NSpid: the pid in each namespace, outermost first; the last is the pid inside its own.
  const nsPid = /^NSpid:\s*(.+)$/m
    .exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    .trim()
    .split(/\s+/);
  expect(nsPid).toEqual([String(pid), '1']);
  return pid;
}

const lockFile = (database: TestDatabase) => join(database.env.DATA_DIR, 'pglite.lock');

describe('The Dockerfile runs node under tini', () => {
  it('has tini installed in the final image and as its ENTRYPOINT, with node as the command', () => {
    const dockerfile = readFileSync(join(__dirname, '..', '..', 'Dockerfile'), 'utf8');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/apt-get install -y --no-install-recommends [^\n]*\btini\b/);
    const last = (instruction: string) =>
      [...finalStage.matchAll(new RegExp(`^${instruction} (.+)$`, 'gm'))].map((match) => match[1]).pop();
    expect(JSON.parse(last('ENTRYPOINT') as string)).toEqual(['tini', '--']);
    expect(JSON.parse(last('CMD') as string)).toEqual(['node', 'dist/src/main.js']);
  });
});

(refusal === null ? describe : describe.skip)(
  refusal === null
    ? 'The service as PID 1 of a new PID namespace: SIGTERM stops it with exit 0, during start-up and once listening'
    : `The service as PID 1 (skipped: \`${UNSHARE.join(' ')}\` is not available or not permitted here, it needs root: ${refusal})`,
  () => {
    let database: TestDatabase;
    const serviceEnv = () => ({ ...testServiceEnv(), ...database.env, LOG_LEVEL: 'info' });
    let child: StartingServiceChild | null = null;

    beforeAll(async () => {
      database = await freshDatabase();
    });
    afterEach(() => {
      // A failed test must not leave a service behind: SIGKILL reaches a namespace's init from outside.
      if (child && child.process.exitCode === null && child.process.signalCode === null) {
        const unsharePid = child.process.pid as number;
        const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim();
        for (const pid of children.split(' ').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
      }
      child = null;
    });
    afterAll(async () => {
      await database?.drop();
    });

    it('the control: a node without handlers as PID 1 ignores SIGTERM (what tini is for), SIGKILL ends it', async () => {
      const bare = spawn(UNSHARE[0], [...UNSHARE.slice(1), process.execPath, '-e', 'setInterval(() => {}, 1000)'], {
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => bare.once('exit', (code) => resolve(code)));
      const pid1 = await pid1Of(bare.pid as number);
      process.kill(pid1, 'SIGTERM');
      await sleep(1_000);
      expect(existsSync(`/proc/${pid1}`)).toBe(true);
      process.kill(pid1, 'SIGKILL');
      // unshare (util-linux 2.38) re-raises a signal that ended its child, but cannot for SIGKILL: exit 1.
      expect(await exited).toBe(1);
      expect(existsSync(`/proc/${pid1}`)).toBe(false);
    }, 30_000);

    it('during start-up: SIGTERM once it handles signals stops it with exit 0 (embedded: its lock released)', async () => {
      const starting = spawnServiceChild(serviceEnv(), UNSHARE);
      child = starting;
      const pid1 = await pid1Of(starting.process.pid as number);
      await starting.catchesSignals();
      process.kill(pid1, 'SIGTERM');
      // unshare exits with its child's status: node's own.
      expect(await starting.exited).toBe(0);
      expect(starting.stdout() + starting.stderr()).toMatch(/SIGTERM received during start-up/);
      if (!onPostgres) expect(existsSync(lockFile(database))).toBe(false);
    }, 180_000);

    it('once listening: SIGTERM stops it with exit 0 after serving (embedded: its lock released)', async () => {
      const starting = spawnServiceChild(serviceEnv(), UNSHARE);
      child = starting;
      const pid1 = await pid1Of(starting.process.pid as number);
      const { port } = await starting.listening;
      const admin = new HttpClient(`http://127.0.0.1:${port}`, ADMIN_TOKEN);
      expect((await admin.get('/health/ready')).status).toBe(200);
      expect((await admin.post('/admin/servers', { name: 'pid1-server', country: 'DE' })).status).toBe(201);
      process.kill(pid1, 'SIGTERM');
      expect(await starting.exited).toBe(0);
      expect(starting.stdout() + starting.stderr()).not.toMatch(/SIGTERM received during start-up/);
      if (!onPostgres) expect(existsSync(lockFile(database))).toBe(false);
    }, 180_000);
  },
);

import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import WebSocket from 'ws';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { createPlayer, loginPlayer } from '../factories/player.factory';
import { createServer, loginServer } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import {
  assertTestDatabaseName,
  RUN_ID_VAR,
  TEST_TMP_ROOT,
  testDatabaseServerUrl,
  withAdminClient,
  withDatabase,
} from '../setup/test-env';
import { HttpClient } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { runSourceScript } from '../support/source-script';
import { ADMIN_TOKEN, testServiceEnv } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/** The migration CLI as the production image runs it (here from its TypeScript source). */
const migrate = (args: string[], env: Record<string, string>) => runSourceScript('src/cli/migrate.ts', args, env);

/** The newest migration's class name (`<Name><timestamp>` of the last `<timestamp>-<Name>.ts`). */
const LAST_MIGRATION = (() => {
  const file = readdirSync(join(ROOT, 'migrations'))
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .pop() as string;
  const [, timestamp, name] = /^(\d+)-(.+)\.ts$/.exec(file) as RegExpExecArray;
  return `${name}${timestamp}`;
})();

/**
 * The two-role set-up of docs/operations.md "Two database roles", on a real PostgreSQL: an owner
 * role migrates and grants, the service runs as a role that owns nothing and may only read and
 * append audit rows. The embedded database has one role (see the last describe).
 */
(testDatabaseServerUrl() ? describe : describe.skip)('Two database roles (PostgreSQL)', () => {
  const suffix = randomBytes(4).toString('hex');
  const owner = `rhythmc_test_owner_${suffix}`;
  const serviceRole = `rhythmc_test_service_${suffix}`;
  const database = `rhythmc_test_roles_${suffix}`;
  const serverUrl = testDatabaseServerUrl() ?? '';
  const as = (role: string) => {
    const url = new URL(withDatabase(serverUrl, database));
    url.username = role;
    url.password = '';
    return url.toString();
  };
  const ownerEnv = () => ({ DATABASE_URL: as(owner) });
  let service: RunningService | null = null;
  let ownerSql: Client;

  const serviceEnv = () => ({
    ...testServiceEnv(),
    DATABASE_URL: as(serviceRole),
    DATA_DIR: join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] as string, `roles_${suffix}`),
    MIGRATE_ON_START: 'false',
  });
  const clients = (running: RunningService) => {
    const baseUrl = `http://127.0.0.1:${running.port}`;
    return { http: new HttpClient(baseUrl), admin: new HttpClient(baseUrl, ADMIN_TOKEN) };
  };
  const auditRows = async () =>
    (
      await ownerSql.query<{ id: string; action: string; target: string }>(
        'SELECT id, action, target, summary, source_address FROM admin_audit ORDER BY id',
      )
    ).rows;

  beforeAll(async () => {
    assertTestDatabaseName(database);
    await withAdminClient(serverUrl, async (admin) => {
      await admin.query(`CREATE ROLE "${owner}" LOGIN`);
      await admin.query(`CREATE ROLE "${serviceRole}" LOGIN`);
      await admin.query(`CREATE DATABASE "${database}" OWNER "${owner}"`);
    });
    const migrated = await migrate(['run'], ownerEnv());
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });
    ownerSql = new Client({ connectionString: as(owner) });
    await ownerSql.connect();
  }, 300_000);

  afterAll(async () => {
    await service?.close();
    await ownerSql?.end();
    await withAdminClient(serverUrl, async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS "${serviceRole}"`);
      await admin.query(`DROP ROLE IF EXISTS "${owner}"`);
    });
  });

  it('migrate grant refuses a role that would defeat the point, and a malformed name', async () => {
    const refusals = await Promise.all([
      migrate(['grant', owner], ownerEnv()),
      migrate(['grant', 'postgres'], ownerEnv()),
      migrate(['grant', `nobody_${suffix}`], ownerEnv()),
      migrate(['grant', 'Bad-Name'], ownerEnv()),
    ]);
    expect(refusals.map(({ code, stderr }) => ({ code, stderr }))).toEqual([
      {
        code: 1,
        stderr: `migrate grant: ${owner} is the role this runs as (the schema's owner): the service needs a role of its own\n`,
      },
      {
        code: 1,
        stderr: `migrate grant: postgres is a superuser, which passes every privilege check: the service's role must not be one\n`,
      },
      {
        code: 1,
        stderr: `migrate grant: role nobody_${suffix} does not exist: create it first (CREATE ROLE nobody_${suffix} LOGIN PASSWORD '…')\n`,
      },
      { code: 2, stderr: expect.stringMatching(/^usage: migrate show\|run\|revert/) },
    ]);
  }, 300_000);

  it('migrate grant refuses a role that may create objects in public (every role may on PostgreSQL 14 and older)', async () => {
    const superuser = new Client({ connectionString: withDatabase(serverUrl, database) });
    await superuser.connect();
    try {
      await superuser.query('GRANT CREATE ON SCHEMA public TO PUBLIC');
      const refused = await migrate(['grant', serviceRole], ownerEnv());
      expect({ code: refused.code, stderr: refused.stderr }).toEqual({
        code: 1,
        stderr:
          `migrate grant: ${serviceRole} may create objects in the schema public, where the owner's migrations would find them: ` +
          `revoke that first (REVOKE CREATE ON SCHEMA public FROM PUBLIC, which PostgreSQL 14 and older grant, ` +
          `and REVOKE CREATE ON SCHEMA public FROM ${serviceRole}; the owner keeps CREATE as the schema's owner or by GRANT CREATE ON SCHEMA public TO ${owner})\n`,
      });
      const granted = await ownerSql.query(
        `SELECT count(*)::int AS n FROM information_schema.role_table_grants WHERE grantee = $1`,
        [serviceRole],
      );
      expect(granted.rows).toEqual([{ n: 0 }]);
    } finally {
      await superuser.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
      await superuser.end();
    }
  }, 300_000);

  it('migrate grant gives the service role its privileges: audit rows to read and append, nothing it owns', async () => {
    const granted = await migrate(['grant', serviceRole], ownerEnv());
    expect({ code: granted.code, stderr: granted.stderr }).toEqual({ code: 0, stderr: '' });
    expect(granted.stdout).toContain(`GRANT SELECT, INSERT ON admin_audit TO "${serviceRole}";\n`);
    expect(granted.stdout).toContain(`Granted ${serviceRole} the service's privileges`);
    const privileges = await ownerSql.query(
      `SELECT p AS privilege, has_table_privilege($1, 'admin_audit', p) AS granted
         FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) AS p`,
      [serviceRole],
    );
    expect(privileges.rows).toEqual([
      { privilege: 'SELECT', granted: true },
      { privilege: 'INSERT', granted: true },
      { privilege: 'UPDATE', granted: false },
      { privilege: 'DELETE', granted: false },
      { privilege: 'TRUNCATE', granted: false },
      { privilege: 'TRIGGER', granted: false },
      { privilege: 'REFERENCES', granted: false },
    ]);
    const owned = await ownerSql.query(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = $1`,
      [serviceRole],
    );
    expect(owned.rows).toEqual([{ n: 0 }]);
    // Run again (after an upgrade): the same grants, no error.
    expect((await migrate(['grant', serviceRole], ownerEnv())).code).toBe(0);
  }, 300_000);

  it('the service runs as the restricted role through its normal routes, one audit row per admin write', async () => {
    const capture = new LogCapture();
    service = await startService(loadConfig({ ...serviceEnv(), LOG_LEVEL: 'warn' }), { logDestination: capture });
    const app = clients(service);
    const before = (await auditRows()).length;

    const server = await createServer(app, { name: `roles-${suffix}` });
    const session = await loginServer(app, server);
    await defineCharts(app, [701]);
    const player = await createPlayer(app);
    const online = await loginPlayer(app, session, player);
    const upload = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: online.uid, accessToken: online.accessToken, timestamp: Date.now() },
        server: { serverID: session.serverID, serverName: server.serverName, country: 'DE' },
        payload: gameplayPayload(701, Date.now() - 1_000),
      },
      { token: session.accessToken },
    );
    expect({ status: upload.status, personalBest: upload.body.personalBest, siteRank: upload.body.siteRank }).toEqual({
      status: 200,
      personalBest: true,
      siteRank: 1,
    });
    const socket = new WebSocket(`ws://127.0.0.1:${service.port}/ws`, {
      headers: { Authorization: `Bearer ${session.accessToken}` },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.close();
    const ban = await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'roles test' });
    expect(ban.status).toBe(200);

    const rows = (await auditRows()).slice(before);
    expect(rows.map((row) => [row.action, row.target])).toEqual([
      ['server.register', `server:${server.serverID}`],
      ['catalog.charts', 'catalog:charts'],
      ['player.create', `player:${player.uid}`],
      ['player.net-token', `player:${player.uid}`],
      ['player.ban', `player:${player.uid}`],
    ]);
    const listed = await app.admin.get('/admin/audit', { query: { target: `player:${player.uid}` } });
    expect((listed.body as { items: Array<{ action: string }> }).items.map((item) => item.action)).toEqual([
      'player.ban',
      'player.net-token',
      'player.create',
    ]);
    // Nothing the service did at start or since needed more than its grants.
    expect(capture.records().map((record) => `${record.level as number} ${record.msg as string}`)).toEqual([]);

    // Erasing the player: its audit rows are rewritten by the owner's function (the role may not UPDATE them).
    const erased = await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username });
    expect(erased.status).toBe(200);
    const [{ pseudonym }] = (
      await ownerSql.query<{ pseudonym: string }>('SELECT pseudonym FROM player_erasure WHERE uid = $1', [player.uid])
    ).rows;
    const after = await auditRows();
    expect(after.filter((row) => row.target === `player:${player.uid}`)).toEqual([]);
    expect(after.filter((row) => row.target === `player:${pseudonym}`).map((row) => row.action)).toEqual([
      'player.create',
      'player.net-token',
      'player.ban',
      'player.erase',
    ]);
    // The function rewrites nothing of a player that was not erased.
    const serviceSql = new Client({ connectionString: as(serviceRole) });
    await serviceSql.connect();
    try {
      await expect(
        serviceSql.query(`SELECT rhythmc_audit_pseudonymise($1, 'erased-000000000000')`, [online.uid + 1_000]),
      ).rejects.toThrow(`player ${online.uid + 1_000} has no erasure tombstone named erased-000000000000`);
    } finally {
      await serviceSql.end();
    }
  }, 120_000);

  it("the service's role cannot empty, change or unprotect the audit log", async () => {
    const rows = await auditRows();
    expect(rows.length).toBeGreaterThan(0);
    const serviceSql = new Client({ connectionString: as(serviceRole) });
    await serviceSql.connect();
    const refusals: Record<string, string> = {};
    try {
      for (const statement of [
        'TRUNCATE admin_audit',
        'TRUNCATE admin_audit RESTART IDENTITY CASCADE',
        'DELETE FROM admin_audit',
        `UPDATE admin_audit SET action = 'x'`,
        'ALTER TABLE admin_audit DISABLE TRIGGER ALL',
        'ALTER TABLE admin_audit DISABLE TRIGGER "TRG_admin_audit_append_only"',
        'ALTER TABLE admin_audit DISABLE TRIGGER "TRG_admin_audit_no_truncate"',
        'DROP TRIGGER "TRG_admin_audit_no_truncate" ON admin_audit',
        'CREATE TRIGGER t BEFORE INSERT ON admin_audit FOR EACH ROW EXECUTE FUNCTION admin_audit_append_only()',
        'CREATE OR REPLACE FUNCTION admin_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
        `ALTER TABLE admin_audit OWNER TO "${serviceRole}"`,
        'DROP TABLE admin_audit',
        "SET session_replication_role = 'replica'",
        'CREATE TABLE audit_copy (id int)',
      ]) {
        refusals[statement] = await serviceSql.query(statement).then(
          () => 'ran',
          (error: Error) => error.message,
        );
      }
      // Its normal work on the table: reading it.
      expect((await serviceSql.query('SELECT count(*)::int AS n FROM admin_audit')).rows).toEqual([{ n: rows.length }]);
    } finally {
      await serviceSql.end();
    }
    expect(refusals).toEqual({
      'TRUNCATE admin_audit': 'permission denied for table admin_audit',
      'TRUNCATE admin_audit RESTART IDENTITY CASCADE': 'permission denied for table admin_audit',
      'DELETE FROM admin_audit': 'permission denied for table admin_audit',
      [`UPDATE admin_audit SET action = 'x'`]: 'permission denied for table admin_audit',
      'ALTER TABLE admin_audit DISABLE TRIGGER ALL': 'must be owner of table admin_audit',
      'ALTER TABLE admin_audit DISABLE TRIGGER "TRG_admin_audit_append_only"': 'must be owner of table admin_audit',
      'ALTER TABLE admin_audit DISABLE TRIGGER "TRG_admin_audit_no_truncate"': 'must be owner of table admin_audit',
      'DROP TRIGGER "TRG_admin_audit_no_truncate" ON admin_audit': 'must be owner of relation admin_audit',
      'CREATE TRIGGER t BEFORE INSERT ON admin_audit FOR EACH ROW EXECUTE FUNCTION admin_audit_append_only()':
        'permission denied for table admin_audit',
      'CREATE OR REPLACE FUNCTION admin_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$':
        'permission denied for schema public',
      [`ALTER TABLE admin_audit OWNER TO "${serviceRole}"`]: 'must be owner of table admin_audit',
      'DROP TABLE admin_audit': 'must be owner of table admin_audit',
      "SET session_replication_role = 'replica'": 'permission denied to set parameter "session_replication_role"',
      'CREATE TABLE audit_copy (id int)': 'permission denied for schema public',
    });
    expect(await auditRows()).toEqual(rows);
    // The owner is refused TRUNCATE too, by the trigger (it can only drop the trigger first, on purpose).
    await expect(ownerSql.query('TRUNCATE admin_audit')).rejects.toThrow('admin_audit is append-only');
  });

  it("the owner's pseudonymising function looks nothing up in public that the service's role could create there", async () => {
    // As on PostgreSQL 14 and older by default: every role may create in public.
    const superuser = new Client({ connectionString: withDatabase(serverUrl, database) });
    await superuser.connect();
    const serviceSql = new Client({ connectionString: as(serviceRole) });
    await serviceSql.connect();
    const uid = 990_000_001;
    const pseudonym = 'erased-0000000000aa';
    try {
      await superuser.query(`GRANT CREATE ON SCHEMA public TO "${serviceRole}"`);
      // A closer match for the function's jsonb_build_object('player', p_pseudonym) than pg_catalog's (VARIADIC "any").
      await serviceSql.query(
        `CREATE FUNCTION public.jsonb_build_object(text, text) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{"hijacked": "yes"}'::jsonb $$`,
      );
      await ownerSql.query('INSERT INTO player_erasure (uid, pseudonym) VALUES ($1, $2)', [uid, pseudonym]);
      await serviceSql.query(
        `INSERT INTO admin_audit (action, target, summary, credential, actor) VALUES ('player.ban', $1, '{"reason": "x"}', 'admin', 'ADMIN_TOKEN')`,
        [`player:${uid}`],
      );
      const called = await serviceSql.query<{ n: number }>('SELECT rhythmc_audit_pseudonymise($1, $2) AS n', [
        uid,
        pseudonym,
      ]);
      expect(called.rows).toEqual([{ n: 1 }]);
      const rewritten = await ownerSql.query('SELECT target, summary FROM admin_audit WHERE target = $1', [
        `player:${pseudonym}`,
      ]);
      expect(rewritten.rows).toEqual([{ target: `player:${pseudonym}`, summary: { player: pseudonym } }]);
    } finally {
      await superuser.query('DROP FUNCTION IF EXISTS public.jsonb_build_object(text, text)');
      await superuser.query(`REVOKE CREATE ON SCHEMA public FROM "${serviceRole}"`);
      await superuser.end();
      await serviceSql.end();
    }
  });

  it('with MIGRATE_ON_START=false a start stops while a migration is pending, naming it', async () => {
    await service?.close();
    service = null;
    const reverted = await migrate(['revert'], ownerEnv());
    expect(reverted.code).toBe(0);
    const refused = await runSourceScript('src/main.ts', [], serviceEnv());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `rhythmc-backend failed to start: Error: 1 migration is pending (${LAST_MIGRATION}) and MIGRATE_ON_START is false: apply them as the schema's owner (node dist/src/cli/migrate.js run with the owner's DATABASE_URL), then start the service again`,
    );
    expect((await migrate(['run'], ownerEnv())).code).toBe(0);
    service = await startService(loadConfig(serviceEnv()));
    expect((await clients(service).http.get('/health/ready')).status).toBe(200);
  }, 300_000);
});

describe('Two database roles on the embedded database', () => {
  it('migrate grant says the embedded database has one role', async () => {
    const result = await migrate(['grant', 'rhythmc_service'], {
      DATABASE_URL: '',
      DATA_DIR: join(
        TEST_TMP_ROOT,
        process.env[RUN_ID_VAR] as string,
        `roles_embedded_${randomBytes(3).toString('hex')}`,
      ),
    });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'migrate grant needs DATABASE_URL (PostgreSQL): the embedded database has one role\n',
    });
  }, 120_000);
});

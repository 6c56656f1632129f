import type { DataSource } from 'typeorm';
import { pendingMigrationNames } from './migrate';

/** A role name the grants write without quoting doubts: lower case, as `CREATE ROLE name` makes it. */
export const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Refused by the checks of grantServiceRole; the CLI prints the message and exits 1. */
export class ServiceRoleError extends Error {}

/**
 * What the service's role may do (docs/operations.md "Two database roles"): read and write every
 * table, except the audit log (read and append only) and the migrations table (read only, so that
 * a start with MIGRATE_ON_START=false can check it); use the sequences; call the functions. It owns
 * nothing, so it cannot alter, drop or disable a trigger of any table, and it has no TRUNCATE
 * privilege. The default privileges give it the same on the tables later migrations create.
 */
export function serviceRoleGrants(role: string): string[] {
  const to = `TO "${role}"`;
  return [
    `GRANT USAGE ON SCHEMA public ${to}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public ${to}`,
    `REVOKE ALL ON admin_audit FROM "${role}"`,
    `GRANT SELECT, INSERT ON admin_audit ${to}`,
    `REVOKE ALL ON migrations FROM "${role}"`,
    `GRANT SELECT ON migrations ${to}`,
    `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public ${to}`,
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public ${to}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES ${to}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES ${to}`,
  ];
}

/**
 * Grants the service's role its privileges (serviceRoleGrants), run by the schema's owner (the
 * role that ran the migrations) in one transaction. Refuses a role that would defeat the point: one
 * that does not exist, a superuser, the owner itself or a member of it, one that owns a table, or
 * one that may create objects in the schema public; and a schema with pending migrations (the
 * audit table must exist to be restricted).
 */
export async function grantServiceRole(dataSource: DataSource, role: string): Promise<string[]> {
  const pending = await pendingMigrationNames(dataSource);
  if (pending.length > 0) {
    throw new ServiceRoleError(
      `${pending.length} migration${pending.length === 1 ? ' is' : 's are'} pending: run "migrate run" first`,
    );
  }
  const [found] = await dataSource.query<
    Array<{
      superuser: boolean;
      isOwner: boolean;
      memberOfOwner: boolean;
      owns: number;
      owner: string;
      createsInPublic: boolean;
    }>
  >(
    `SELECT r.rolsuper AS superuser,
            r.rolname = current_user AS "isOwner",
            pg_has_role(r.oid, current_user, 'MEMBER') AS "memberOfOwner",
            (SELECT count(*)::int FROM pg_tables t WHERE t.schemaname = 'public' AND t.tableowner = r.rolname) AS owns,
            current_user AS owner,
            has_schema_privilege(r.oid, 'public', 'CREATE') AS "createsInPublic"
       FROM pg_roles r WHERE r.rolname = $1`,
    [role],
  );
  if (found === undefined) {
    throw new ServiceRoleError(`role ${role} does not exist: create it first (CREATE ROLE ${role} LOGIN PASSWORD '…')`);
  }
  if (found.isOwner) {
    throw new ServiceRoleError(
      `${role} is the role this runs as (the schema's owner): the service needs a role of its own`,
    );
  }
  if (found.superuser) {
    throw new ServiceRoleError(
      `${role} is a superuser, which passes every privilege check: the service's role must not be one`,
    );
  }
  if (found.memberOfOwner) {
    throw new ServiceRoleError(
      `${role} is a member of ${found.owner}, the schema's owner, and has its rights: revoke that first`,
    );
  }
  if (found.owns > 0) {
    throw new ServiceRoleError(`${role} owns ${found.owns} table(s) of the schema: the service's role must own none`);
  }
  if (found.createsInPublic) {
    // PostgreSQL 14 and older give every role CREATE on public. A function the role put there
    // with a closer argument match than pg_catalog's would be called by the owner's migrations.
    throw new ServiceRoleError(
      `${role} may create objects in the schema public, where the owner's migrations would find them: ` +
        `revoke that first (REVOKE CREATE ON SCHEMA public FROM PUBLIC, which PostgreSQL 14 and older grant, ` +
        `and REVOKE CREATE ON SCHEMA public FROM ${role}; the owner keeps CREATE as the schema's owner or by GRANT CREATE ON SCHEMA public TO ${found.owner})`,
    );
  }
  const statements = serviceRoleGrants(role);
  await dataSource.transaction(async (manager) => {
    for (const statement of statements) await manager.query(statement);
  });
  return statements;
}

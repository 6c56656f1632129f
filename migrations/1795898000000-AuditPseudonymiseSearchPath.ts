import { MigrationInterface, QueryRunner } from 'typeorm';

/** The function's body; only its table names differ between up (qualified) and down (as before). */
const body = (schema: string) => `
            DECLARE
              v_count integer;
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM ${schema}player_erasure e WHERE e.uid = p_uid AND e.pseudonym = p_pseudonym) THEN
                RAISE EXCEPTION 'player % has no erasure tombstone named %', p_uid, p_pseudonym;
              END IF;
              PERFORM set_config('rhythmc.audit_pseudonymise', 'on', true);
              -- What staff did to the player stays, under the pseudonym; the free texts of the
              -- summary (names, ban and void reasons) go.
              UPDATE ${schema}admin_audit a
                 SET target = CASE WHEN a.target LIKE 'player:%' THEN 'player:' || p_pseudonym ELSE a.target END,
                     summary = (SELECT COALESCE(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
                                  FROM jsonb_each(a.summary) e
                                 WHERE e.key IN ('until', 'banstate', 'levelId', 'review'))
                               || jsonb_build_object('player', p_pseudonym)
               WHERE a.target = 'player:' || p_uid::text
                  OR (a.target LIKE 'play:%' AND a.summary ->> 'uid' = p_uid::text);
              GET DIAGNOSTICS v_count = ROW_COUNT;
              PERFORM set_config('rhythmc.audit_pseudonymise', 'off', true);
              RETURN v_count;
            END
            `;

/**
 * rhythmc_audit_pseudonymise (src/audit/sql/rhythmc_audit_pseudonymise.sql) is the schema's one
 * SECURITY DEFINER function: it runs as the schema's owner when the service's role calls it. Its
 * search_path was `public, pg_temp`. Where the service's role may create objects in `public`
 * (PostgreSQL 14 and older let every role do so unless an operator revoked it), an operator or
 * function of that role with a closer argument match than pg_catalog's would have been chosen
 * inside the function, and run as the owner. Now the search_path is `pg_catalog, pg_temp` and the
 * two tables are named with their schema: nothing of `public` but those two tables is looked up.
 * Same signature, privileges and answers; the previous release's calls are unchanged. Written by
 * hand.
 */
export class AuditPseudonymiseSearchPath1795898000000 implements MigrationInterface {
  name = 'AuditPseudonymiseSearchPath1795898000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE OR REPLACE FUNCTION public.rhythmc_audit_pseudonymise(p_uid bigint, p_pseudonym text) RETURNS integer
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$${body('public.')}$$
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE OR REPLACE FUNCTION public.rhythmc_audit_pseudonymise(p_uid bigint, p_pseudonym text) RETURNS integer
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$${body('')}$$
        `);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The erasure's rewrite of a player's audit rows as one function owned by the schema's owner
 * (SECURITY DEFINER), written by hand: under the two-role set-up (docs/operations.md "Two database
 * roles") the service's role may only read and append audit rows, so its own UPDATE would be
 * refused. The function rewrites only the rows that name one erased player, only their target and
 * summary, and only once the player's tombstone with that pseudonym exists (written first, in the
 * same transaction): the service's role cannot use it to rewrite anything else.
 */
export class AuditPseudonymise1795873000000 implements MigrationInterface {
  name = 'AuditPseudonymise1795873000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_audit_pseudonymise(p_uid bigint, p_pseudonym text) RETURNS integer
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
            DECLARE
              v_count integer;
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM player_erasure e WHERE e.uid = p_uid AND e.pseudonym = p_pseudonym) THEN
                RAISE EXCEPTION 'player % has no erasure tombstone named %', p_uid, p_pseudonym;
              END IF;
              PERFORM set_config('rhythmc.audit_pseudonymise', 'on', true);
              -- What staff did to the player stays, under the pseudonym; the free texts of the
              -- summary (names, ban and void reasons) go.
              UPDATE admin_audit a
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
            $$
        `);
    await queryRunner.query(`REVOKE ALL ON FUNCTION rhythmc_audit_pseudonymise(bigint, text) FROM PUBLIC`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION rhythmc_audit_pseudonymise(bigint, text)`);
  }
}

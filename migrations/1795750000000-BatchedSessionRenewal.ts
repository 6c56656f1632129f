import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `resume_session`'s renewal as a function, `rhythmc_renew_player_session`, so that the service can
 * batch it like the login and the syncs (StatementBatcher; docs/decisions.md "Logins, syncs and
 * uploads batched under load"). It does what the single statement with a data-modifying CTE did
 * (SessionRepository.renewPlayerSessionByToken before this migration): finds the session of the
 * token, says whether it was live at `p_now` and whose it is, and, when it was live, is `p_uid`'s
 * and the server session has not ended, moves it to that server session and extends its token.
 * One difference: a renewal older than the one the session holds (its expiry is earlier than the
 * stored one) writes nothing and is answered as renewed, so renewals that run out of order (a
 * batch run again after a failure, two instances) leave the latest one standing, with its server
 * session, instead of the one that ran last.
 * It always answers one row (uid NULL: no session has that token), so a batch has a row per call.
 * Like the other batched functions it waits at most 5 s for a row lock.
 * Written by hand (the TypeORM CLI does not generate functions). Runs on PostgreSQL and on the
 * embedded PGlite.
 */
export class BatchedSessionRenewal1795750000000 implements MigrationInterface {
  name = 'BatchedSessionRenewal1795750000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE FUNCTION rhythmc_renew_player_session(
  p_token_hash bpchar, p_uid bigint, p_server_session_id uuid, p_now timestamptz, p_expires_at timestamptz
) RETURNS TABLE (uid bigint, live boolean, renewed boolean) LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
#variable_conflict use_column
DECLARE
  v_id uuid;
BEGIN
  SELECT s.id, s.uid, s.logged_out_at IS NULL AND s.token_expires_at > p_now
    INTO v_id, uid, live
    FROM player_session s WHERE s.token_hash = p_token_hash;
  IF NOT FOUND THEN RETURN NEXT; RETURN; END IF;
  renewed := false;
  IF live AND uid = p_uid THEN
    -- The update names the uid as well as the id (SessionRepository, openSession).
    UPDATE player_session ps
       SET server_session_id = p_server_session_id, token_expires_at = p_expires_at, renewed_at = p_now
     WHERE ps.id = v_id AND ps.uid = p_uid AND ps.logged_out_at IS NULL AND ps.token_expires_at < p_expires_at
       AND EXISTS (SELECT 1 FROM server_session ss WHERE ss.id = p_server_session_id AND ss.ended_at IS NULL);
    renewed := FOUND;
    IF NOT renewed THEN
      -- Not written: the session or the server session ended, or a renewal made later (a call
      -- that ran first: another batch, its retry, another instance) set a later expiry. That one
      -- stands, with its server session, and this call is answered as renewed.
      renewed := EXISTS (
        SELECT 1 FROM player_session ps
         WHERE ps.id = v_id AND ps.uid = p_uid AND ps.logged_out_at IS NULL AND ps.token_expires_at >= p_expires_at
           AND EXISTS (SELECT 1 FROM server_session ss WHERE ss.id = p_server_session_id AND ss.ended_at IS NULL));
    END IF;
  END IF;
  RETURN NEXT;
END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP FUNCTION rhythmc_renew_player_session(bpchar, bigint, uuid, timestamptz, timestamptz)',
    );
  }
}

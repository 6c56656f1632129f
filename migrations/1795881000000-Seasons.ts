import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Periods on the boards (issue #44 items 1–2; docs/decisions.md "Periods and seasons"):
 * board_period (day, week, month, season), each period's bests and ATP (period_chart_best,
 * period_rating) written by the upload's own statement, and the archives of closed periods.
 *
 * Functions (written by hand; schema-drift ignores functions; PostgreSQL and PGlite):
 *   - rhythmc_best_improves: the new-best rule (improves() in src/upload/upload.service.ts), now
 *     called by rhythmc_upload_play and by the period bests;
 *   - rhythmc_count_period_play: a counted play into every period open at p_at, under the shared
 *     period lock (advisory 727_044): a close takes it exclusively to stop the writes;
 *   - rhythmc_ensure_calendar_periods: the day, week (from Monday: ISO, date_trunc) and month
 *     containing p_at in the time zone p_tz, created once (ON CONFLICT on (kind, starts_at));
 *   - rhythmc_upload_play gains p_period_at (the service's period clock) and counts the play for
 *     the open periods, whether or not it is an all-time best. The new argument is last and
 *     defaults to NULL (then the play counts at p_now), so the previous release's calls with the
 *     old argument list resolve to the new function while instances roll (docs/decisions.md
 *     "Rolling upgrades: expand, then contract"; .ci/rolling-upgrade found the 500).
 */
const UPLOAD_PLAY_OLD =
  'rhythmc_upload_play(bigint, integer, bigint, bigint, float8, boolean, boolean, boolean, boolean, integer, boolean, boolean, bigint, float8, integer[], varchar, integer, varchar, varchar, uuid, bpchar, timestamptz, timestamptz, text[], bigint)';

/** The advisory lock of period writes (src/ranking/periods/period.repository.ts PERIOD_LOCK_KEY). */
const PERIOD_LOCK_KEY = 727_044;

const UPLOAD_PLAY_NEW =
  'rhythmc_upload_play(bigint, integer, bigint, bigint, float8, boolean, boolean, boolean, boolean, integer, boolean, boolean, bigint, float8, integer[], varchar, integer, varchar, varchar, uuid, bpchar, timestamptz, timestamptz, text[], bigint, timestamptz)';

/** The period step: a counted play counts for every open period, an all-time best or not. */
const PERIODS_STEP = `  PERFORM rhythmc_count_period_play(p_uid, p_level_id, p_acc, new_received_ms, new_record_id,
    v_chart.difficulty_constant, coalesce(p_period_at, p_now));
`;

/** rhythmc_upload_play as migration OneRoundTripUpload wrote it (periods false), or with the period step. */
const uploadPlay = (periods: boolean): string => `
CREATE FUNCTION rhythmc_upload_play(
  p_uid bigint, p_level_id integer, p_time_ms bigint, p_player_timestamp_ms bigint, p_acc float8, p_pass boolean,
  p_full_combo boolean, p_all_perfect boolean, p_is_new_record boolean, p_max_combo integer, p_is_rival boolean,
  p_is_win boolean, p_rival_uid bigint, p_rival_acc float8, p_counters integer[], p_player_arena varchar,
  p_server_id integer, p_server_name varchar, p_server_country varchar, p_server_session_id uuid,
  p_token_hash bpchar, p_now timestamptz, p_live_since timestamptz, p_flags text[], p_judged bigint${periods ? ',\n  p_period_at timestamptz DEFAULT NULL' : ''}
) RETURNS TABLE (
  outcome text, new_record_id bigint, new_received_ms bigint,
  chart_constant float8, chart_placeholder boolean, chart_notes integer,
  prev_version bigint, prev_atp numeric, prev_acc float8, prev_first_time_ms bigint, prev_record_id bigint,
  prev_rating float8, prev_best_version bigint,
  new_version bigint, new_atp_e4 bigint, new_rating float8,
  self_banned boolean, ban_generation bigint, db_now timestamptz
) LANGUAGE plpgsql AS $$
DECLARE
  v_chart record;
  v_session_id uuid;
  v_rating record;
  v_has_rating boolean;
  v_best record;
  v_has_best boolean;
  v_counted boolean;
BEGIN
  SELECT s.id INTO v_session_id FROM player_session s
    WHERE s.token_hash = p_token_hash
      AND rhythmc_upload_session_accepted(s.uid, s.logged_out_at, s.server_session_id, s.token_expires_at,
            s.renewed_at, p_uid, p_server_session_id, p_now, p_live_since);
  IF NOT FOUND THEN outcome := 'session'; RETURN NEXT; RETURN; END IF;

  -- The rating row's lock before the insert, as the transactional path takes it: two copies of one
  -- record queue on it instead of deadlocking on it and the record key.
  SELECT r.atp, r.version INTO v_rating FROM player_rating r WHERE r.uid = p_uid FOR UPDATE;
  v_has_rating := FOUND;
  -- The chart as it is now (after the lock, as every read below).
  SELECT c.difficulty_constant, c.placeholder, c.notes INTO v_chart FROM chart c WHERE c.level_id = p_level_id;
  IF NOT FOUND THEN outcome := 'chart'; RETURN NEXT; RETURN; END IF;
  chart_constant := v_chart.difficulty_constant;
  chart_placeholder := v_chart.placeholder;
  chart_notes := v_chart.notes;
  -- p_judged: the notes the record judged, null when the noteCount check is off.
  IF v_chart.notes IS NOT NULL AND p_judged IS NOT NULL AND p_judged <> v_chart.notes THEN
    outcome := 'notes'; RETURN NEXT; RETURN;
  END IF;
  INSERT INTO play_record (uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record,
    max_combo, is_rival, is_win, rival_uid, rival_acc,
    tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
    dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss,
    player_arena, server_id, server_name, server_country, server_session_id, player_session_id, flags)
  SELECT p_uid, p_level_id, p_time_ms, p_player_timestamp_ms, p_acc, p_pass, p_full_combo, p_all_perfect, p_is_new_record,
    p_max_combo, p_is_rival, p_is_win, p_rival_uid, p_rival_acc,
    p_counters[1], p_counters[2], p_counters[3], p_counters[4], p_counters[5], p_counters[6],
    p_counters[7], p_counters[8], p_counters[9], p_counters[10], p_counters[11], p_counters[12],
    p_player_arena, p_server_id, p_server_name, p_server_country, p_server_session_id, v_session_id, p_flags
  ON CONFLICT (uid, level_id, time_ms) DO NOTHING
  RETURNING id, floor(extract(epoch FROM received_at) * 1000)::bigint INTO new_record_id, new_received_ms;
  IF NOT FOUND THEN
    -- Nothing written: the transactional path answers from the stored record.
    new_record_id := NULL; new_received_ms := NULL; outcome := 'duplicate'; RETURN NEXT; RETURN;
  END IF;
  outcome := 'stored';
  db_now := now();
  SELECT g.generation INTO ban_generation FROM rank_ban_generation g WHERE g.id = 1;
  self_banned := EXISTS (SELECT 1 FROM player_ban b
    WHERE b.uid = p_uid AND b.lifted_at IS NULL AND (b.until IS NULL OR b.until > now()));

  -- Counted: COUNTED_RECORD for a new record (neither approved nor voided). A first counted play
  -- creates the rating row (a concurrent first play may have created it: then it is locked here).
  v_counted := p_pass AND cardinality(p_flags) = 0 AND NOT v_chart.placeholder;
  IF v_counted AND NOT v_has_rating THEN
    INSERT INTO player_rating (uid, atp, version) VALUES (p_uid, 0, 0) ON CONFLICT (uid) DO NOTHING;
    SELECT r.atp, r.version INTO v_rating FROM player_rating r WHERE r.uid = p_uid FOR UPDATE;
    v_has_rating := true;
  END IF;
  -- The lock returned the row's latest version; the reads since take snapshots after it.
  IF v_has_rating THEN prev_version := v_rating.version; prev_atp := v_rating.atp; ELSE prev_version := 0; END IF;
  SELECT b.acc, b.first_time_ms, b.record_id, b.rating, b.version INTO v_best
    FROM player_chart_best b WHERE b.uid = p_uid AND b.level_id = p_level_id;
  v_has_best := FOUND;
  IF v_has_best THEN
    prev_acc := v_best.acc; prev_first_time_ms := v_best.first_time_ms; prev_record_id := v_best.record_id;
    prev_rating := v_best.rating; prev_best_version := v_best.version;
  END IF;
  IF NOT v_counted THEN RETURN NEXT; RETURN; END IF;
  -- A new best: the first, a higher acc, or the same acc reached earlier (improves() in the service).
${periods ? PERIODS_STEP : ''}  IF v_has_best AND NOT ${periods ? 'rhythmc_best_improves(p_acc, new_received_ms, v_best.acc, v_best.first_time_ms)' : '(p_acc > v_best.acc OR (p_acc = v_best.acc AND new_received_ms < v_best.first_time_ms))'} THEN
    RETURN NEXT; RETURN;
  END IF;

  new_rating := rhythmc_play_rating(v_chart.difficulty_constant, p_acc);
  new_atp_e4 := rhythmc_atp_e4(ARRAY(
    SELECT o.rating FROM player_chart_best o WHERE o.uid = p_uid AND o.level_id <> p_level_id
     ORDER BY o.rating DESC LIMIT 30) || new_rating);
  new_version := nextval('rank_version_seq');
  INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
  VALUES (p_uid, p_level_id, p_acc, new_received_ms, new_record_id, new_rating, new_version, now())
  ON CONFLICT (uid, level_id) DO UPDATE
    SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
        rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now();
  UPDATE player_rating r SET atp = new_atp_e4 * 0.0001, version = new_version, updated_at = now() WHERE r.uid = p_uid;
  -- A banned player's keys changed (an upload that raced its ban): every ban view must reload.
  IF self_banned THEN
    UPDATE rank_ban_generation g SET generation = g.generation + 1 WHERE g.id = 1;
  END IF;
  RETURN NEXT;
END $$`;

export class Seasons1795881000000 implements MigrationInterface {
  name = 'Seasons1795881000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "board_period" (
                "id" BIGSERIAL NOT NULL,
                "kind" character varying(8) NOT NULL,
                "slug" character varying(64),
                "name" character varying(128),
                "starts_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "ends_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "grant_collection" character varying(64),
                "grant_top" integer,
                "closed_at" TIMESTAMP WITH TIME ZONE,
                "archived_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "CHK_board_period_grant" CHECK (
                    ("grant_collection" IS NULL) = ("grant_top" IS NULL)
                ),
                CONSTRAINT "CHK_board_period_span" CHECK ("ends_at" > "starts_at"),
                CONSTRAINT "CHK_board_period_kind" CHECK ("kind" IN ('day', 'week', 'month', 'season')),
                CONSTRAINT "PK_2f0486e18f777d8a4f02713a54f" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_board_period_open" ON "board_period" ("ends_at")
            WHERE closed_at IS NULL
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "UQ_board_period_slug" ON "board_period" ("slug")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "UQ_board_period_calendar" ON "board_period" ("kind", "starts_at")
            WHERE kind <> 'season'
        `);
    await queryRunner.query(`
            CREATE TABLE "period_chart_best" (
                "period_id" bigint NOT NULL,
                "uid" bigint NOT NULL,
                "level_id" integer NOT NULL,
                "acc" double precision NOT NULL,
                "first_time_ms" bigint NOT NULL,
                "record_id" bigint NOT NULL,
                "rating" double precision NOT NULL,
                CONSTRAINT "PK_3c884fcb9eb4bb5acdcbaebd391" PRIMARY KEY ("period_id", "uid", "level_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_period_chart_best_top" ON "period_chart_best" ("period_id", "uid", "rating")
        `);
    await queryRunner.query(`
            CREATE TABLE "period_rating" (
                "period_id" bigint NOT NULL,
                "uid" bigint NOT NULL,
                "atp" numeric(10, 4) NOT NULL,
                CONSTRAINT "PK_32232720840b4c270bf45417bc3" PRIMARY KEY ("period_id", "uid")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "period_atp_archive" (
                "period_id" bigint NOT NULL,
                "rank" integer NOT NULL,
                "uid" bigint NOT NULL,
                "atp" numeric(10, 4) NOT NULL,
                CONSTRAINT "PK_89dc365a5bbef05218cd065a878" PRIMARY KEY ("period_id", "rank")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_period_atp_archive_uid" ON "period_atp_archive" ("period_id", "uid")
        `);
    await queryRunner.query(`
            CREATE TABLE "period_chart_archive" (
                "period_id" bigint NOT NULL,
                "level_id" integer NOT NULL,
                "rank" integer NOT NULL,
                "uid" bigint NOT NULL,
                "acc" double precision NOT NULL,
                "rating" double precision NOT NULL,
                CONSTRAINT "PK_4c9ea9ba8b9cfc2af4032e04c59" PRIMARY KEY ("period_id", "level_id", "rank")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_period_chart_archive_uid" ON "period_chart_archive" ("period_id", "level_id", "uid")
        `);
    await queryRunner.query(`
            ALTER TABLE "period_chart_best"
            ADD CONSTRAINT "FK_0abd4b719afd1097532a4819798" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "period_rating"
            ADD CONSTRAINT "FK_b8539e996f9b33dfd95963d517d" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_period_chart_best_track" ON "period_chart_best" ("period_id", "level_id", "acc" DESC, "first_time_ms", "uid")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_period_rating_site" ON "period_rating" ("period_id", "atp" DESC, "uid")
        `);
    await queryRunner.query(`
CREATE FUNCTION rhythmc_best_improves(p_acc float8, p_time_ms bigint, b_acc float8, b_time_ms bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT b_acc IS NULL OR p_acc > b_acc OR (p_acc = b_acc AND p_time_ms < b_time_ms)
$$`);
    await queryRunner.query(`
CREATE FUNCTION rhythmc_ensure_calendar_periods(p_at timestamptz, p_tz text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO board_period (kind, starts_at, ends_at)
  SELECT k.kind, (date_trunc(k.kind, p_at AT TIME ZONE p_tz)) AT TIME ZONE p_tz,
         (date_trunc(k.kind, p_at AT TIME ZONE p_tz) + ('1 ' || k.kind)::interval) AT TIME ZONE p_tz
    FROM (VALUES ('day'), ('week'), ('month')) AS k(kind)
  ON CONFLICT (kind, starts_at) WHERE kind <> 'season' DO NOTHING
$$`);
    await queryRunner.query(`
CREATE FUNCTION rhythmc_count_period_play(
  p_uid bigint, p_level_id integer, p_acc float8, p_time_ms bigint, p_record_id bigint, p_constant float8, p_at timestamptz
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_period bigint;
  v_best record;
  v_rating float8 := rhythmc_play_rating(p_constant, p_acc);
BEGIN
  -- Held to the commit; a close takes it exclusively, so no play lands in a period after its close.
  PERFORM pg_advisory_xact_lock_shared(${PERIOD_LOCK_KEY});
  FOR v_period IN SELECT p.id FROM board_period p
      WHERE p.closed_at IS NULL AND p.starts_at <= p_at AND p.ends_at > p_at LOOP
    SELECT b.acc, b.first_time_ms INTO v_best FROM period_chart_best b
      WHERE b.period_id = v_period AND b.uid = p_uid AND b.level_id = p_level_id;
    IF FOUND AND NOT rhythmc_best_improves(p_acc, p_time_ms, v_best.acc, v_best.first_time_ms) THEN CONTINUE; END IF;
    INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
    VALUES (v_period, p_uid, p_level_id, p_acc, p_time_ms, p_record_id, v_rating)
    ON CONFLICT (period_id, uid, level_id) DO UPDATE
      SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id, rating = EXCLUDED.rating;
    INSERT INTO period_rating (period_id, uid, atp)
    VALUES (v_period, p_uid, rhythmc_atp_e4(ARRAY(SELECT o.rating FROM period_chart_best o
      WHERE o.period_id = v_period AND o.uid = p_uid ORDER BY o.rating DESC LIMIT 30)) * 0.0001)
    ON CONFLICT (period_id, uid) DO UPDATE SET atp = EXCLUDED.atp;
  END LOOP;
END $$`);
    await queryRunner.query(
      `ALTER FUNCTION rhythmc_count_period_play(bigint, integer, float8, bigint, bigint, float8, timestamptz) SET lock_timeout = '5s'`,
    );
    await queryRunner.query(`DROP FUNCTION ${UPLOAD_PLAY_OLD}`);
    await queryRunner.query(uploadPlay(true));
    await queryRunner.query(`ALTER FUNCTION ${UPLOAD_PLAY_NEW} SET lock_timeout = '5s'`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION ${UPLOAD_PLAY_NEW}`);
    await queryRunner.query(uploadPlay(false));
    await queryRunner.query(`ALTER FUNCTION ${UPLOAD_PLAY_OLD} SET lock_timeout = '5s'`);
    await queryRunner.query('DROP FUNCTION rhythmc_count_period_play');
    await queryRunner.query('DROP FUNCTION rhythmc_ensure_calendar_periods');
    await queryRunner.query('DROP FUNCTION rhythmc_best_improves');
    await queryRunner.query('DROP INDEX "public"."IDX_period_rating_site"');
    await queryRunner.query('DROP INDEX "public"."IDX_period_chart_best_track"');
    await queryRunner.query(`
            ALTER TABLE "period_rating" DROP CONSTRAINT "FK_b8539e996f9b33dfd95963d517d"
        `);
    await queryRunner.query(`
            ALTER TABLE "period_chart_best" DROP CONSTRAINT "FK_0abd4b719afd1097532a4819798"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_period_chart_archive_uid"
        `);
    await queryRunner.query(`
            DROP TABLE "period_chart_archive"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_period_atp_archive_uid"
        `);
    await queryRunner.query(`
            DROP TABLE "period_atp_archive"
        `);
    await queryRunner.query(`
            DROP TABLE "period_rating"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_period_chart_best_top"
        `);
    await queryRunner.query(`
            DROP TABLE "period_chart_best"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."UQ_board_period_calendar"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."UQ_board_period_slug"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_board_period_open"
        `);
    await queryRunner.query(`
            DROP TABLE "board_period"
        `);
  }
}

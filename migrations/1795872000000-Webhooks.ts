import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outgoing webhooks (docs/decisions.md "Webhooks"). Written by hand:
 * - `webhook`: a receiver staff registered (URL, the events it wants, its signing secret, its format);
 * - `webhook_delivery`: the outbox. One row per webhook and event, written in the transaction of the
 *   change that causes it (by the triggers below, or by `rhythmc_webhook_enqueue` called from a
 *   service's transaction), claimed after commit by any instance (FOR UPDATE SKIP LOCKED) and kept
 *   as the webhook's delivery log. Its id is the delivery id receivers dedupe on.
 * - `rhythmc_webhook_enqueue(type, event_id, payload)`: the one rule of who gets an event (enabled
 *   and subscribed); a second enqueue of the same event id for a webhook changes nothing.
 * - triggers: a newer best on a chart (`player.personal_best`, `chart.first_place`), a player whose
 *   ATP enters a webhook's top N (`player.atp_top`), a play stored or marked with failed checks
 *   (`play.flagged`), a play voided (`play.voided`), a server session ended other than by its own
 *   next login (`server.offline`). Each first asks whether any enabled webhook wants the event: with
 *   none, a write pays one look at a table of a few rows.
 * The active ban is activeBan() of src/player/player.repository.ts (the same text as the upload's
 * function).
 */
export class Webhooks1795872000000 implements MigrationInterface {
  name = 'Webhooks1795872000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "webhook" (
                "id" SERIAL NOT NULL,
                "name" character varying(64) NOT NULL,
                "url" character varying(2048) NOT NULL,
                "events" text array NOT NULL,
                "format" character varying(16) NOT NULL DEFAULT 'json',
                "atp_top" integer NOT NULL DEFAULT 10,
                "secret" character varying(128) NOT NULL,
                "enabled" boolean NOT NULL DEFAULT true,
                "disabled_reason" character varying(256),
                "failing_since" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_webhook" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "webhook_delivery" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "webhook_id" integer NOT NULL,
                "event_id" uuid NOT NULL,
                "event_type" character varying(32) NOT NULL,
                "payload" jsonb NOT NULL,
                "state" character varying(16) NOT NULL DEFAULT 'pending',
                "attempts" integer NOT NULL DEFAULT 0,
                "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "last_status" integer,
                "last_error" character varying(256),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "delivered_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "UQ_webhook_delivery_event" UNIQUE ("webhook_id", "event_id"),
                CONSTRAINT "PK_webhook_delivery" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_webhook_delivery_due" ON "webhook_delivery" ("next_attempt_at")
            WHERE state = 'pending'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_webhook_delivery_log" ON "webhook_delivery" ("webhook_id", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_delivery"
            ADD CONSTRAINT "FK_webhook_delivery_webhook" FOREIGN KEY ("webhook_id") REFERENCES "webhook"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_enqueue(p_type text, p_event_id uuid, p_payload jsonb)
            RETURNS void LANGUAGE sql AS $$
              INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload)
              SELECT w.id, p_event_id, p_type, p_payload FROM webhook w WHERE w.enabled AND p_type = ANY (w.events)
              ON CONFLICT (webhook_id, event_id) DO NOTHING
            $$
        `);
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_wanted(p_type text) RETURNS boolean LANGUAGE sql STABLE AS $$
              SELECT EXISTS (SELECT 1 FROM webhook w WHERE w.enabled AND p_type = ANY (w.events))
            $$
        `);
    // A newer play became the player's best on a chart (a recompute falling back to an older play
    // after a void is not one). First place: the best is now the chart's first among players
    // without an active ban, ordered as the boards are (acc, then who reached it first).
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_best() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
              v_pb boolean := rhythmc_webhook_wanted('player.personal_best');
              v_first boolean := rhythmc_webhook_wanted('chart.first_place');
              v_player jsonb;
              v_chart jsonb;
              v_top record;
              v_previous jsonb := NULL;
            BEGIN
              IF NOT (v_pb OR v_first) THEN RETURN NULL; END IF;
              IF TG_OP = 'UPDATE' AND NEW.record_id <= OLD.record_id THEN RETURN NULL; END IF;
              SELECT jsonb_build_object('uid', p.uid, 'username', p.username) INTO v_player FROM player p WHERE p.uid = NEW.uid;
              SELECT jsonb_build_object('levelId', NEW.level_id, 'name', c.name) INTO v_chart FROM chart c WHERE c.level_id = NEW.level_id;
              v_chart := coalesce(v_chart, jsonb_build_object('levelId', NEW.level_id, 'name', NULL));
              IF v_pb THEN
                PERFORM rhythmc_webhook_enqueue('player.personal_best', gen_random_uuid(), jsonb_build_object(
                  'player', v_player, 'chart', v_chart, 'acc', NEW.acc, 'rating', NEW.rating, 'playId', NEW.record_id::text,
                  'previousAcc', CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD.acc) ELSE 'null'::jsonb END));
              END IF;
              IF v_first THEN
                SELECT b.uid, b.acc INTO v_top FROM player_chart_best b
                 WHERE b.level_id = NEW.level_id
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = b.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 ORDER BY b.acc DESC, b.first_time_ms ASC, b.uid ASC LIMIT 1;
                IF FOUND AND v_top.uid = NEW.uid THEN
                  SELECT jsonb_build_object('player', jsonb_build_object('uid', p.uid, 'username', p.username), 'acc', b.acc)
                    INTO v_previous
                    FROM player_chart_best b JOIN player p ON p.uid = b.uid
                   WHERE b.level_id = NEW.level_id AND b.uid <> NEW.uid
                     AND NOT EXISTS (SELECT 1 FROM player_ban pb
                          WHERE pb.uid = b.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                   ORDER BY b.acc DESC, b.first_time_ms ASC, b.uid ASC LIMIT 1;
                  PERFORM rhythmc_webhook_enqueue('chart.first_place', gen_random_uuid(), jsonb_build_object(
                    'player', v_player, 'chart', v_chart, 'acc', NEW.acc, 'playId', NEW.record_id::text,
                    'previous', coalesce(v_previous, 'null'::jsonb)));
                END IF;
              END IF;
              RETURN NULL;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_chart_best_webhook"
            AFTER INSERT OR UPDATE ON "player_chart_best"
            FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_best()
        `);
    // The ATP rank as the site board orders it (atp, then uid), banned players left out. One row
    // per webhook whose top N the player entered (N differs per webhook): the event id is shared.
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_atp() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
              v_max integer;
              v_after integer;
              v_before integer;
              v_event uuid := gen_random_uuid();
              v_payload jsonb;
              w record;
            BEGIN
              IF NEW.atp <= coalesce(OLD.atp, 0) THEN RETURN NULL; END IF;
              SELECT max(x.atp_top) INTO v_max FROM webhook x WHERE x.enabled AND 'player.atp_top' = ANY (x.events);
              IF v_max IS NULL THEN RETURN NULL; END IF;
              SELECT count(*) + 1 INTO v_after FROM (
                SELECT 1 FROM player_rating r
                 WHERE (r.atp > NEW.atp OR (r.atp = NEW.atp AND r.uid < NEW.uid)) AND r.uid <> NEW.uid
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = r.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 LIMIT v_max) AS above;
              IF v_after > v_max THEN RETURN NULL; END IF;
              SELECT count(*) + 1 INTO v_before FROM (
                SELECT 1 FROM player_rating r
                 WHERE (r.atp > OLD.atp OR (r.atp = OLD.atp AND r.uid < OLD.uid)) AND r.uid <> NEW.uid
                   AND NOT EXISTS (SELECT 1 FROM player_ban pb
                        WHERE pb.uid = r.uid AND pb.lifted_at IS NULL AND (pb.until IS NULL OR pb.until > now()))
                 LIMIT v_max + 1) AS above;
              IF OLD.atp = 0 THEN v_before := v_max + 1; END IF;
              SELECT jsonb_build_object('player', jsonb_build_object('uid', p.uid, 'username', p.username),
                       'atp', NEW.atp, 'rank', v_after, 'previousRank', CASE WHEN OLD.atp = 0 THEN NULL ELSE v_before END)
                INTO v_payload FROM player p WHERE p.uid = NEW.uid;
              FOR w IN SELECT x.id, x.atp_top FROM webhook x
                        WHERE x.enabled AND 'player.atp_top' = ANY (x.events) AND v_after <= x.atp_top AND v_before > x.atp_top LOOP
                INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload)
                VALUES (w.id, v_event, 'player.atp_top', v_payload || jsonb_build_object('top', w.atp_top))
                ON CONFLICT (webhook_id, event_id) DO NOTHING;
              END LOOP;
              RETURN NULL;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_rating_webhook"
            AFTER UPDATE OF "atp" ON "player_rating"
            FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_atp()
        `);
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_play() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
              v_type text;
            BEGIN
              IF TG_OP = 'INSERT' OR (cardinality(OLD.flags) = 0 AND cardinality(NEW.flags) > 0) THEN
                IF cardinality(NEW.flags) = 0 THEN RETURN NULL; END IF;
                v_type := 'play.flagged';
              ELSIF OLD.voided_at IS NULL AND NEW.voided_at IS NOT NULL THEN
                v_type := 'play.voided';
              ELSE
                RETURN NULL;
              END IF;
              IF NOT rhythmc_webhook_wanted(v_type) THEN RETURN NULL; END IF;
              PERFORM rhythmc_webhook_enqueue(v_type, gen_random_uuid(), jsonb_build_object(
                'playId', NEW.id::text,
                'player', (SELECT jsonb_build_object('uid', p.uid, 'username', p.username) FROM player p WHERE p.uid = NEW.uid),
                'chart', jsonb_build_object('levelId', NEW.level_id, 'name', (SELECT c.name FROM chart c WHERE c.level_id = NEW.level_id)),
                'acc', NEW.acc, 'flags', to_jsonb(NEW.flags), 'server', jsonb_build_object('id', NEW.server_id, 'name', NEW.server_name),
                'reason', CASE WHEN v_type = 'play.voided' THEN to_jsonb(NEW.void_reason) ELSE 'null'::jsonb END));
              RETURN NULL;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_play_record_webhook_insert"
            AFTER INSERT ON "play_record"
            FOR EACH ROW WHEN (cardinality(NEW.flags) > 0) EXECUTE FUNCTION rhythmc_webhook_play()
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_play_record_webhook_update"
            AFTER UPDATE OF "flags", "voided_at" ON "play_record"
            FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_play()
        `);
    // A server session's end names the server offline unless its own next login ended it
    // ('replaced'). The event id is the session's id: the sweep of expired sessions
    // (WebhookDispatcher) writes the same one, so a session is reported offline once.
    await queryRunner.query(`
            CREATE FUNCTION rhythmc_webhook_server_ended() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NOT rhythmc_webhook_wanted('server.offline') THEN RETURN NULL; END IF;
              PERFORM rhythmc_webhook_enqueue('server.offline', NEW.id, jsonb_build_object(
                'server', (SELECT jsonb_build_object('id', g.id, 'name', g.name) FROM game_server g WHERE g.id = NEW.server_id),
                'reason', NEW.end_reason, 'sessionId', NEW.id));
              RETURN NULL;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_server_session_webhook"
            AFTER UPDATE OF "ended_at" ON "server_session"
            FOR EACH ROW WHEN (OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL AND NEW.end_reason IS DISTINCT FROM 'replaced')
            EXECUTE FUNCTION rhythmc_webhook_server_ended()
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_server_session_webhook" ON "server_session"`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_server_ended()`);
    await queryRunner.query(`DROP TRIGGER "TRG_play_record_webhook_update" ON "play_record"`);
    await queryRunner.query(`DROP TRIGGER "TRG_play_record_webhook_insert" ON "play_record"`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_play()`);
    await queryRunner.query(`DROP TRIGGER "TRG_player_rating_webhook" ON "player_rating"`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_atp()`);
    await queryRunner.query(`DROP TRIGGER "TRG_player_chart_best_webhook" ON "player_chart_best"`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_best()`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_wanted(text)`);
    await queryRunner.query(`DROP FUNCTION rhythmc_webhook_enqueue(text, uuid, jsonb)`);
    await queryRunner.query(`ALTER TABLE "webhook_delivery" DROP CONSTRAINT "FK_webhook_delivery_webhook"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_webhook_delivery_log"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_webhook_delivery_due"`);
    await queryRunner.query(`DROP TABLE "webhook_delivery"`);
    await queryRunner.query(`DROP TABLE "webhook"`);
  }
}

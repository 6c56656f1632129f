-- Trigger on player_rating (delete): a rank_change_tombstone row, for the rank index snapshot to catch up with.
CREATE OR REPLACE FUNCTION public.rank_change_tombstone_add()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            BEGIN
                INSERT INTO "rank_change_tombstone" ("change_seq", "uid") VALUES (nextval('rank_change_seq'), OLD."uid");
                RETURN OLD;
            END
            $function$

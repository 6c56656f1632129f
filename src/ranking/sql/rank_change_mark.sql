-- Trigger on player_rating (insert, update): stamps change_seq, the rank index snapshot's watermark.
CREATE OR REPLACE FUNCTION public.rank_change_mark()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            BEGIN
                NEW."change_seq" := nextval('rank_change_seq');
                RETURN NEW;
            END
            $function$

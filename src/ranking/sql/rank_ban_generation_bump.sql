-- Trigger on player_ban (per statement): bumps rank_ban_generation, so every instance reloads its banned players.
CREATE OR REPLACE FUNCTION public.rank_ban_generation_bump()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
            BEGIN
                UPDATE "rank_ban_generation" SET "generation" = "generation" + 1 WHERE "id" = 1;
                RETURN NULL;
            END
            $function$

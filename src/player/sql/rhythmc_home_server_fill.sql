-- Trigger on player_rating and player_chart_best (before insert): a new row takes the player's home server.
CREATE OR REPLACE FUNCTION public.rhythmc_home_server_fill()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- A locking read: a login moving the home (it holds the player row) is waited for, and its
  -- new home read, so a row created while the home moves cannot keep the old one.
  SELECT p.home_server_id INTO NEW.home_server_id FROM player p WHERE p.uid = NEW.uid FOR KEY SHARE;
  RETURN NEW;
END $function$


-- Moves a player's home server (docs/decisions.md "Scoped boards: groups and countries"): the player row and
-- its copies on player_rating and player_chart_best; called by rhythmc_player_login and the transactional login.
CREATE OR REPLACE FUNCTION public.rhythmc_player_move_home(p_uid bigint, p_home integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- The caller holds the player row (and, before it, the rating row: the upload's lock order).
  UPDATE player p SET home_server_id = p_home WHERE p.uid = p_uid AND p.home_server_id IS DISTINCT FROM p_home;
  IF NOT FOUND THEN RETURN; END IF;
  UPDATE player_rating r SET home_server_id = p_home WHERE r.uid = p_uid;
  UPDATE player_chart_best c SET home_server_id = p_home WHERE c.uid = p_uid;
END $function$


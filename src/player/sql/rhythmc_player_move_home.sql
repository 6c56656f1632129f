-- Moves a player's home server (docs/decisions.md "Scoped boards: groups and countries") when the login's
-- server has another scope (rhythmc_player_home_moves): the player row and its copies on player_rating
-- and player_chart_best; called by rhythmc_player_login and the transactional login.
CREATE OR REPLACE FUNCTION public.rhythmc_player_move_home(p_uid bigint, p_home integer, p_group_servers integer[] DEFAULT NULL::integer[], p_in_group boolean DEFAULT NULL::boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- The caller holds the player row (and, before it, the rating row: the upload's lock order).
  UPDATE player p SET home_server_id = p_home
    WHERE p.uid = p_uid AND rhythmc_player_home_moves(p.home_server_id, p_home, p_group_servers, p_in_group);
  IF NOT FOUND THEN RETURN; END IF;
  UPDATE player_rating r SET home_server_id = p_home WHERE r.uid = p_uid;
  UPDATE player_chart_best c SET home_server_id = p_home WHERE c.uid = p_uid;
END $function$


-- The home-server rule (docs/decisions.md "Scoped boards: groups and countries"): whether a login on
-- p_server moves a player whose home is p_home. The group is computed by the service from the
-- session-handover setting (ServerService.loginHomeGroup / homeGroup, server.types.ts homeGroup);
-- called by rhythmc_player_login and rhythmc_player_move_home.
CREATE OR REPLACE FUNCTION public.rhythmc_player_home_moves(p_home integer, p_server integer, p_group_servers integer[], p_in_group boolean)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  -- No home yet, or no group given (the previous release's calls): any other server moves it.
  SELECT p_home IS DISTINCT FROM p_server AND (
    p_home IS NULL OR p_group_servers IS NULL
    -- Another group: the home is in the login server's group or, for a server in no group, in none.
    OR (p_home = ANY (p_group_servers)) IS DISTINCT FROM p_in_group
    -- Another country, exactly.
    OR (SELECT g.country FROM game_server g WHERE g.id = p_home)
       IS DISTINCT FROM (SELECT g.country FROM game_server g WHERE g.id = p_server))
$function$

-- The new-best rule (a first play, a higher acc, or the same acc reached earlier).
-- Called by rhythmc_upload_record and rhythmc_count_period_play.
CREATE OR REPLACE FUNCTION public.rhythmc_best_improves(p_acc double precision, p_time_ms bigint, b_acc double precision, b_time_ms bigint)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT b_acc IS NULL OR p_acc > b_acc OR (p_acc = b_acc AND p_time_ms < b_time_ms)
$function$

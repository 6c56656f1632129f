-- playRating of src/upload/rating.ts, float8 in the same order.
CREATE OR REPLACE FUNCTION public.rhythmc_play_rating(p_constant double precision, p_acc double precision)
 RETURNS double precision
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN p_acc >= 100 THEN p_constant + 2::float8
    WHEN p_acc >= 98 THEN p_constant + 1::float8 + (p_acc - 98::float8) / 2::float8
    WHEN p_acc >= 95 THEN p_constant + (p_acc - 95::float8) / 3::float8
    ELSE greatest(0::float8, p_constant - (95::float8 - p_acc) / 5::float8)
  END
$function$

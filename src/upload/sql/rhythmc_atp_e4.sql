-- atpTenThousandths of src/upload/rating.ts: the ATP of the best 30 ratings, in ten-thousandths.
CREATE OR REPLACE FUNCTION public.rhythmc_atp_e4(p_ratings double precision[])
 RETURNS bigint
 LANGUAGE plpgsql
 IMMUTABLE STRICT
AS $function$
DECLARE
  v_sum float8 := 0;
  v_rating float8;
BEGIN
  -- The 30 highest, summed from the highest down (float8, as atpTenThousandths adds them).
  FOR v_rating IN SELECT r FROM unnest(p_ratings) AS r ORDER BY r DESC LIMIT 30 LOOP
    v_sum := v_sum + v_rating;
  END LOOP;
  RETURN rhythmc_rating_e4(v_sum / 30::float8);
END $function$

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_rating_e4 (src/upload/sql/rhythmc_rating_e4.sql) answers most values without the exact
 * decimal expansion of the double: from 1 to 10^8 ten-thousandths, toPrecision(12) keeps at least 4
 * decimals and moves the value by 0.00005 at most, so it can decide the rounding only when the
 * fraction lies in [0.49995, 0.5); outside [0.4999, 0.5) the value is rounded half up as it is, and
 * the rest takes the exact path as before. The same answer for every value (1.2 million compared,
 * halves and their one-ulp neighbours among them; upload-one-statement.e2e-spec.ts compares it with
 * toTenThousandths), 1.6 µs a call instead of 12. Every upload calls it once, and once more per
 * open period. The signature is unchanged: an expand step. `down` writes the exact-only body back.
 * Written by hand.
 */
export class RatingE4FastPath1795894000000 implements MigrationInterface {
  name = 'RatingE4FastPath1795894000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE OR REPLACE FUNCTION public.rhythmc_rating_e4(p_value double precision)
 RETURNS bigint
 LANGUAGE plpgsql
 IMMUTABLE STRICT
AS $function$
DECLARE
  v_scaled float8 := p_value * 10000::float8;
  v_whole float8;
  v_bits bigint;
  v_exponent integer;
  v_exact numeric;
  v_probe numeric;
  v_digits integer := 0;
BEGIN
  IF v_scaled = 0 THEN RETURN 0; END IF;
  IF v_scaled < 0 OR v_scaled = 'Infinity'::float8 OR v_scaled = 'NaN'::float8 THEN
    RAISE EXCEPTION 'rhythmc_rating_e4: % is not a rating', p_value;
  END IF;
  -- From 1 to 10^8 the 12 significant digits keep 4 decimals or more, so that first rounding moves
  -- the value by 0.00005 at most: it decides the integer only when the fraction (exact in float8
  -- here) lies in [0.49995, 0.5). Outside [0.4999, 0.5) the value rounds half up as it is.
  IF v_scaled >= 1 AND v_scaled < 100000000 THEN
    v_whole := floor(v_scaled);
    IF v_scaled - v_whole >= 0.5 THEN RETURN v_whole::bigint + 1; END IF;
    IF v_scaled - v_whole < 0.4999 THEN RETURN v_whole::bigint; END IF;
  END IF;
  -- The exact value of the double: mantissa × 2^(exponent − 1075).
  v_bits := ('x' || encode(float8send(v_scaled), 'hex'))::bit(64)::bigint;
  v_exponent := (v_bits >> 52)::integer;
  v_exact := v_bits & 4503599627370495;
  IF v_exponent = 0 THEN v_exponent := 1; ELSE v_exact := v_exact + 4503599627370496; END IF;
  FOR i IN 1..(1075 - v_exponent) LOOP v_exact := v_exact * 0.5; END LOOP;
  FOR i IN 1..(v_exponent - 1075) LOOP v_exact := v_exact * 2; END LOOP;
  -- 10^(v_digits − 1) ≤ v_exact < 10^v_digits.
  v_probe := v_exact;
  WHILE v_probe >= 1 LOOP v_probe := v_probe * 0.1; v_digits := v_digits + 1; END LOOP;
  WHILE v_probe < 0.1 LOOP v_probe := v_probe * 10; v_digits := v_digits - 1; END LOOP;
  -- toPrecision(12), then Math.round: both half up (numeric round() is half away from zero).
  RETURN round(round(v_exact, 12 - v_digits))::bigint;
END $function$
`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
CREATE OR REPLACE FUNCTION public.rhythmc_rating_e4(p_value double precision)
 RETURNS bigint
 LANGUAGE plpgsql
 IMMUTABLE STRICT
AS $function$
DECLARE
  v_scaled float8 := p_value * 10000::float8;
  v_bits bigint;
  v_exponent integer;
  v_exact numeric;
  v_probe numeric;
  v_digits integer := 0;
BEGIN
  IF v_scaled = 0 THEN RETURN 0; END IF;
  IF v_scaled < 0 OR v_scaled = 'Infinity'::float8 OR v_scaled = 'NaN'::float8 THEN
    RAISE EXCEPTION 'rhythmc_rating_e4: % is not a rating', p_value;
  END IF;
  -- The exact value of the double: mantissa × 2^(exponent − 1075).
  v_bits := ('x' || encode(float8send(v_scaled), 'hex'))::bit(64)::bigint;
  v_exponent := (v_bits >> 52)::integer;
  v_exact := v_bits & 4503599627370495;
  IF v_exponent = 0 THEN v_exponent := 1; ELSE v_exact := v_exact + 4503599627370496; END IF;
  FOR i IN 1..(1075 - v_exponent) LOOP v_exact := v_exact * 0.5; END LOOP;
  FOR i IN 1..(v_exponent - 1075) LOOP v_exact := v_exact * 2; END LOOP;
  -- 10^(v_digits − 1) ≤ v_exact < 10^v_digits.
  v_probe := v_exact;
  WHILE v_probe >= 1 LOOP v_probe := v_probe * 0.1; v_digits := v_digits + 1; END LOOP;
  WHILE v_probe < 0.1 LOOP v_probe := v_probe * 10; v_digits := v_digits - 1; END LOOP;
  -- toPrecision(12), then Math.round: both half up (numeric round() is half away from zero).
  RETURN round(round(v_exact, 12 - v_digits))::bigint;
END $function$
`);
  }
}

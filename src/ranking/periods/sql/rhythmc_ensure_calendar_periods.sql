-- The day, week and month containing p_at in the time zone p_tz, created once (PeriodRepository).
CREATE OR REPLACE FUNCTION public.rhythmc_ensure_calendar_periods(p_at timestamp with time zone, p_tz text)
 RETURNS void
 LANGUAGE sql
AS $function$
  INSERT INTO board_period (kind, starts_at, ends_at)
  SELECT k.kind, (date_trunc(k.kind, p_at AT TIME ZONE p_tz)) AT TIME ZONE p_tz,
         (date_trunc(k.kind, p_at AT TIME ZONE p_tz) + ('1 ' || k.kind)::interval) AT TIME ZONE p_tz
    FROM (VALUES ('day'), ('week'), ('month')) AS k(kind)
  ON CONFLICT (kind, starts_at) WHERE kind <> 'season' DO NOTHING
$function$

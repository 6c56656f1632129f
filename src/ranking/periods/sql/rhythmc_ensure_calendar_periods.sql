-- The day, week and month containing p_at in the time zone p_tz, created once (PeriodRepository).
-- Only the missing ones reach the INSERT, so a run that creates nothing takes no id from the
-- sequence (migration CalendarPeriodsWithoutGaps); ON CONFLICT still settles two instances'
-- race. Ids are taken day, week, month, in that order.
CREATE OR REPLACE FUNCTION public.rhythmc_ensure_calendar_periods(p_at timestamp with time zone, p_tz text)
 RETURNS void
 LANGUAGE sql
AS $function$
  INSERT INTO board_period (kind, starts_at, ends_at)
  SELECT k.kind, k.starts_at, k.ends_at
    FROM (SELECT c.n, c.kind, (date_trunc(c.kind, p_at AT TIME ZONE p_tz)) AT TIME ZONE p_tz AS starts_at,
                 (date_trunc(c.kind, p_at AT TIME ZONE p_tz) + ('1 ' || c.kind)::interval) AT TIME ZONE p_tz AS ends_at
            FROM (VALUES (1, 'day'), (2, 'week'), (3, 'month')) AS c(n, kind)) AS k
   WHERE NOT EXISTS (SELECT 1 FROM board_period p
                      WHERE p.kind <> 'season' AND p.kind = k.kind AND p.starts_at = k.starts_at)
   ORDER BY k.n
  ON CONFLICT (kind, starts_at) WHERE kind <> 'season' DO NOTHING
$function$

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * rhythmc_ensure_calendar_periods (src/ranking/periods/sql/rhythmc_ensure_calendar_periods.sql)
 * inserts only the day, week and month that are missing. Every period job run (30 s by default,
 * twice a run) sent all three rows to INSERT … ON CONFLICT DO NOTHING, which takes each row's id
 * from the sequence before it finds the conflict: six ids burned a run per instance, so period ids
 * jumped by thousands a day. ON CONFLICT stays for two instances creating the same period at once.
 * Same signature and answers; the previous release's calls are unchanged. Written by hand.
 */
export class CalendarPeriodsWithoutGaps1795897000000 implements MigrationInterface {
  name = 'CalendarPeriodsWithoutGaps1795897000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
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
`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
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
`);
  }
}

-- The archived window's generic plan at 1M archived players (issue #44, docs/benchmarks.md
-- "Closing a period and archived reads"): the statement before and after the LATERAL form of
-- archiveWindow (src/ranking/periods/period.repository.ts), each as a named statement under the
-- generic plan the service's prepared statements settle on.
-- History: both statements read the row layout (period_atp_archive), which the archive left on
-- 2026-11-29 for blocks (decisions.md "Periods and seasons", archive layout; the table stays a
-- release for the previous one). The blocks' window is measured by bench:periods:close.
--
--   createdb -h 127.0.0.1 -U postgres rhythmc_bench_plan
--   DATABASE_URL=postgres://postgres@127.0.0.1:5432/rhythmc_bench_plan node -r ./scripts/ts-register.js src/cli/migrate.ts run
--   psql -h 127.0.0.1 -U postgres -d rhythmc_bench_plan -f bench/periods/archive-window-plan.sql
--
-- Data: 1,000,000 players and one archived season whose ATP archive holds them all, the uids
-- scattered over the ranks (rank g holds uid g * 7919 mod 1M + 1). Generated once per database.
\set ON_ERROR_STOP on
INSERT INTO player (uid, username)
SELECT g, 'p' || g FROM generate_series(1, 1000000) g
WHERE NOT EXISTS (SELECT 1 FROM player);
INSERT INTO board_period (id, kind, slug, name, starts_at, ends_at, closed_at, archived_at)
SELECT 1, 'season', 'plan', 'Plan', now() - interval '2 days', now() - interval '1 day', now(), now()
WHERE NOT EXISTS (SELECT 1 FROM board_period WHERE id = 1);
INSERT INTO period_atp_archive (period_id, rank, uid, atp)
SELECT 1, g, (g::bigint * 7919) % 1000000 + 1, 1000000 - g FROM generate_series(1, 1000000) g
WHERE NOT EXISTS (SELECT 1 FROM period_atp_archive WHERE period_id = 1);
ANALYZE player, period_atp_archive;

SET plan_cache_mode = force_generic_plan;
PREPARE before_lateral(bigint, bigint, int) AS
SELECT m.rank AS anchor, a.rank, a.uid, a.atp, p.username, p.display_name
  FROM (SELECT a.rank FROM period_atp_archive a WHERE a.period_id = $1 AND a.uid = $2) AS m
  JOIN period_atp_archive a ON a.period_id = $1 AND a.rank BETWEEN m.rank - $3 AND m.rank + $3
  JOIN player p ON p.uid = a.uid
 ORDER BY a.rank;
PREPARE with_lateral(bigint, bigint, int) AS
SELECT m.rank AS anchor, a.rank, a.uid, a.atp, p.username, p.display_name
  FROM (SELECT a.rank FROM period_atp_archive a WHERE a.period_id = $1 AND a.uid = $2) AS m
  CROSS JOIN LATERAL (
    SELECT a.* FROM period_atp_archive a
     WHERE a.period_id = $1 AND a.rank >= m.rank - $3 AND a.rank <= m.rank + $3
     ORDER BY a.rank LIMIT 2 * $3 + 1
  ) AS a
  JOIN player p ON p.uid = a.uid
 ORDER BY a.rank;
EXPLAIN (ANALYZE, COSTS OFF) EXECUTE before_lateral(1, 424242, 5);
EXPLAIN (ANALYZE, COSTS OFF) EXECUTE with_lateral(1, 424242, 5);
EXPLAIN (ANALYZE, COSTS OFF) EXECUTE before_lateral(1, 7, 5);
EXPLAIN (ANALYZE, COSTS OFF) EXECUTE with_lateral(1, 7, 5);

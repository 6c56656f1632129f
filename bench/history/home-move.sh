#!/usr/bin/env bash
# The cost of a home server move (issue #44, docs/benchmarks.md "Scoped boards: the cost of a home
# move"): rhythmc_player_move_home, which a login on another server than the player's last one runs,
# rewrites the player's rating row and every one of their bests. pgbench times a pair of moves
# (there and back, one transaction each) for players with 0, 30 and 300 bests, and a login on the
# same server (no write), then the 300-best pair with the best trigger as it was before migration
# BestWebhookTriggerOnRecord (fired on every update) against as it is (only on updates of
# record_id), alternating, with a VACUUM before each round. Then a lobby <-> game server hop inside one
# group and country (servers 1 and 2, group {1,2}, both DE), as the login calls the function since
# migration HomeMovesOnScope (no write), against the same hop under the previous rule (the
# two-argument call: two moves) and a hop to another country (server 3, FR: two moves); and the
# login's check that the setting it computed the group from is the one in force, alone; and the
# whole login function for player 12 (each login closing the previous one's session as expired):
# two logins on the same server, and a hop inside the scope, by the previous release's call (12
# arguments: the previous rule) and by this one's (the group and the setting).
#
#   bench/history/home-move.sh        # PG_URL (postgres://postgres@127.0.0.1:5432), ROUNDS (3), PAIRS (200)
#
# Creates (and at the end drops) the database rhythmc_bench_home_move, migrated by this checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_URL="${PG_URL:-postgres://postgres@127.0.0.1:5432}"
ROUNDS="${ROUNDS:-3}"
PAIRS="${PAIRS:-200}"
DB=rhythmc_bench_home_move
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"; psql "$PG_URL/postgres" -qAtc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null' EXIT

psql "$PG_URL/postgres" -qAtc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null
DATABASE_URL="$PG_URL/$DB" node -r ./scripts/ts-register.js src/cli/migrate.ts run
psql "$PG_URL/$DB" -qAt <<'SQL'
INSERT INTO game_server (id, name, country) VALUES (1, 'lobby', 'DE'), (2, 'game', 'DE'), (3, 'game-fr', 'FR');
INSERT INTO player (uid, username) SELECT g, 'p' || g FROM generate_series(1, 21000) g;
INSERT INTO player_rating (uid, atp, version) SELECT u, 100, 1 FROM unnest(ARRAY[10, 11, 12]) u;
-- Player 10 has no best, 11 has 30, 12 has 300; 20,000 others have 30 each on the same charts.
INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version)
SELECT 11, l, 90, 1, l, 10, 1 FROM generate_series(1, 30) l;
INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version)
SELECT 12, l, 90, 1, l, 10, 1 FROM generate_series(1, 300) l;
INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version)
SELECT u, l, 50 + (u % 50), 1, u * 1000 + l, 5, 1 FROM generate_series(1001, 21000) u, generate_series(1, 30) l;
INSERT INTO server_session (id, server_id, token_hash, token_expires_at, plugin_version, plugin_sha)
SELECT ('00000000-0000-0000-0000-00000000000' || s)::uuid, s, repeat(s::text, 64), now() + interval '1 day', 1, 'bench'
  FROM generate_series(1, 2) s;
ANALYZE;
SQL

for uid in 10 11 12; do
  printf 'SELECT rhythmc_player_move_home(%s, 1);\nSELECT rhythmc_player_move_home(%s, 2);\n' "$uid" "$uid" >"$WORK/move$uid.sql"
done
printf 'SELECT rhythmc_player_move_home(12, 2);\n' >"$WORK/stay.sql"
printf "SELECT rhythmc_player_move_home(12, 1, '{1,2}', true);\nSELECT rhythmc_player_move_home(12, 2, '{1,2}', true);\n" >"$WORK/hop.sql"
printf "SELECT rhythmc_player_move_home(12, 1, '{1,2}', true);\nSELECT rhythmc_player_move_home(12, 3, '{}', false);\n" >"$WORK/abroad.sql"
printf "SELECT coalesce((SELECT s.value FROM service_setting s WHERE s.key = 'session_handover'), 'null'::jsonb) IS DISTINCT FROM 'null'::jsonb;\n" >"$WORK/setting.sql"
login() {
  echo "SELECT status FROM rhythmc_player_login('TOKEN', 12, NULL, NULL, NULL, '00000000-0000-0000-0000-00000000000$1',
    md5(random()::text) || md5(random()::text), now() - interval '1 second', 1, md5(random()::text) || md5(random()::text),
    now() + interval '1 hour', now()${2:-});"
}
group=", '{1,2}', true, 'null'"
{ login 2; login 2; } >"$WORK/login-same-previous.sql"
{ login 2 "$group"; login 2 "$group"; } >"$WORK/login-same.sql"
{ login 1; login 2; } >"$WORK/login-hop-previous.sql"
{ login 1 "$group"; login 2 "$group"; } >"$WORK/login-hop.sql"
latency() { pgbench "$PG_URL/$DB" -n -t "$PAIRS" -f "$1" 2>&1 | sed -n 's/^latency average = //p'; }
trigger() {
  psql "$PG_URL/$DB" -qAtc 'DROP TRIGGER "TRG_player_chart_best_webhook" ON player_chart_best' \
    -c "CREATE TRIGGER \"TRG_player_chart_best_webhook\" AFTER INSERT OR UPDATE $1 ON player_chart_best FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_best()"
}
vacuum() { psql "$PG_URL/$DB" -qAtc 'VACUUM player_chart_best, player_rating, player, player_session'; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
vacuum
echo "a login on the same server (no move): $(latency "$WORK/stay.sql")"
for round in $(seq 1 "$ROUNDS"); do
  vacuum
  same="$(latency "$WORK/hop.sql")"
  vacuum
  previous="$(latency "$WORK/move12.sql")"
  vacuum
  abroad="$(latency "$WORK/abroad.sql")"
  echo "round $round, a pair of hops with 300 bests: same group and country $same; previous rule $previous; to another country $abroad"
done
echo "the setting check alone: $(latency "$WORK/setting.sql")"
for round in $(seq 1 "$ROUNDS"); do
  line="round $round, a pair of logins of player 12:"
  for case in login-same-previous login-same login-hop-previous login-hop; do
    vacuum
    line="$line $case $(latency "$WORK/$case.sql");"
  done
  echo "$line"
done
for uid in 10 11 12; do
  vacuum
  echo "a pair of moves, player $uid: $(latency "$WORK/move$uid.sql")"
done
for round in $(seq 1 "$ROUNDS"); do
  trigger ""
  vacuum
  before="$(latency "$WORK/move12.sql")"
  trigger "OF record_id"
  vacuum
  after="$(latency "$WORK/move12.sql")"
  echo "round $round, a pair of moves with 300 bests: trigger on every update $before; on record_id $after"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

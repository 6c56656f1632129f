import type { RetentionSetting } from '../config/app-config';
import { NEVER_COUNTS_RECORD } from '../upload/counted-record.rule';

/**
 * Every table of the schema and what retention does with it: the one map RetentionService runs and
 * test/e2e/retention.e2e-spec.ts holds against the schema (a new table fails that test until it is
 * listed here, purged or kept with why). docs/decisions.md "Retention" says why.
 *
 * A purge deletes, in batches, rows that ended more than the setting's days ago. `doomed` is fixed
 * SQL, never built from input: it selects the `id`s of at most $2 rows that ended before $1
 * (timestamptz), oldest first along an index, locked with SKIP LOCKED (a row another transaction
 * holds is left for the next run). The purges of one setting run in this order: a row is deleted
 * only once nothing that is kept refers to it.
 */
export interface RetentionPurge {
  /** The table; also the purge's name in logs, metrics and `retention_run`. */
  table: string;
  setting: RetentionSetting;
  /** What goes, in words (docs and the admin view). */
  rows: string;
  doomed: string;
}

/**
 * A batch's settings, for its own transaction only (`set_config(…, true)`). It waits at most 2 s
 * for a lock it needs (a foreign key check, a row another write holds), then fails and the run
 * stops; the next run tries again. Its plan walks indexes whatever the statistics say: the purge
 * order's index up to the limit, then a primary-key probe per row. With the planner's defaults a
 * batch read every doomed row and sorted them on a table never analyzed (webhook_delivery: a
 * bitmap scan of its partial index), and the DELETE's join read the whole table by a hash join
 * (ws_connection, player_session_takeover, analyzed or not): a batch's cost grew with the table,
 * a backlog's with its square (docs/decisions.md "Retention", bench/retention/batch-plans.ts).
 */
export const PURGE_BATCH_SETTINGS = `SELECT set_config('lock_timeout', '2s', true),
       set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true),
       set_config('enable_sort', 'off', true), set_config('enable_hashjoin', 'off', true),
       set_config('enable_mergejoin', 'off', true)`;

/** One batch of a purge after PURGE_BATCH_SETTINGS ($1 the cut-off, $2 the limit): how many rows went. */
export const purgeBatchSql = (purge: RetentionPurge): string =>
  `WITH doomed AS (${purge.doomed}),
        gone AS (DELETE FROM ${purge.table} t USING doomed d WHERE t.id = d.id RETURNING 1)
   SELECT count(*)::int AS deleted FROM gone`;

export const RETENTION_PURGES: readonly RetentionPurge[] = [
  {
    // Takeovers first: they name two player sessions (foreign keys), which go only after them.
    table: 'player_session_takeover',
    setting: 'sessions',
    rows: 'takeovers of sessions without proof, taken over more than N days ago',
    doomed: `SELECT id FROM player_session_takeover WHERE taken_at < $1 ORDER BY taken_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  },
  {
    table: 'player_session',
    setting: 'sessions',
    rows: 'player sessions logged out more than N days ago that no kept takeover names',
    doomed: `SELECT s.id FROM player_session s
              WHERE s.logged_out_at < $1
                AND NOT EXISTS (SELECT 1 FROM player_session_takeover t WHERE t.from_session_id = s.id)
                AND NOT EXISTS (SELECT 1 FROM player_session_takeover t WHERE t.to_session_id = s.id)
              ORDER BY s.logged_out_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
  },
  {
    // A server session that still has a player session (logged out less than N days ago, or not at
    // all) stays: deleting it would cascade to that player session.
    table: 'server_session',
    setting: 'sessions',
    rows: 'server sessions ended more than N days ago with no player session left',
    doomed: `SELECT s.id FROM server_session s
              WHERE s.ended_at < $1
                AND NOT EXISTS (SELECT 1 FROM player_session p WHERE p.server_session_id = s.id)
              ORDER BY s.ended_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
  },
  {
    // Closed, or left open by an instance that died (its heartbeat stopped): both before the cut-off.
    table: 'ws_connection',
    setting: 'wsConnections',
    rows: 'WebSocket connection records closed (or last seen) more than N days ago',
    doomed: `SELECT id FROM ws_connection
              WHERE connected_at < $1 AND COALESCE(closed_at, last_seen_at) < $1
              ORDER BY connected_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  },
  {
    // The balance itself is player_balance; the history is the log of changes.
    table: 'balance_history',
    setting: 'balanceHistory',
    rows: 'balance changes older than N days (the balance itself stays)',
    doomed: `SELECT id FROM balance_history WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  },
  {
    table: 'play_record',
    setting: 'failedPlays',
    rows: 'failed plays without flags or void, received more than N days ago (no review can make them count)',
    doomed: `SELECT r.id FROM play_record r
              WHERE ${NEVER_COUNTS_RECORD('r')} AND r.received_at < $1
              ORDER BY r.received_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  },
  {
    table: 'webhook_delivery',
    setting: 'webhookDeliveries',
    rows: 'webhook deliveries delivered or given up, created more than N days ago (pending ones stay)',
    doomed: `SELECT id FROM webhook_delivery
              WHERE state IN ('delivered', 'failed') AND created_at < $1
              ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  },
];

/** Every other table, and why retention leaves it alone. */
export const RETENTION_KEPT: Readonly<Record<string, string>> = {
  admin_audit: 'accountability: append-only, the database refuses DELETE (pseudonymised by an erasure, never purged)',
  realtime_outbox:
    'already bounded: every instance deletes expired frames every 30 s (a token lifetime after the event)',
  server_conflict_count: 'already bounded: rows older than a week are deleted as new ones come',
  player_chart_best: 'one row per player and chart: bests are ranks',
  player_rating: 'one row per ranked player',
  rank_change_tombstone: 'one row per deleted rating (erasures, recomputes): the rank index snapshot catch-up reads it',
  rank_ban_generation: 'one counter',
  player_erasure: 'the tombstones that refuse uploads for erased players',
  player: 'accounts (an erasure removes one)',
  player_ban: 'ban history, a few rows per banned player',
  player_balance: 'one row per player',
  board_period: 'one row per day, week, month and season: the names of the archives',
  period_chart_best: 'bests of open periods; a closed period keeps only its archive (issue #44)',
  period_rating: 'ATP of open periods; a closed period keeps only its archive (issue #44)',
  period_atp_rank_block:
    'closed periods are readable forever (issue #44), 1,000 ranks a row; an erasure removes a player',
  period_atp_uid_block: 'the same entries by uid, 1,000 a row; an erasure removes a player',
  period_chart_rank_block:
    'closed periods are readable forever (issue #44), 1,000 ranks a row; an erasure removes a player',
  period_chart_uid_block: 'the same entries by uid, 1,000 a row; an erasure removes a player',
  rating_history_day:
    'the rating history (one row per day per block of 256 uids); a player reads 90 days, an erasure removes them',
  rating_history_run: 'one row per day taken: what the history job has done',
  player_collection: 'unlocks, bounded by players and collections',
  player_credential: 'one row per player',
  player_resume_token: 'one row per player',
  collection: 'definitions',
  chart: 'the catalog',
  catalog_generation: 'one counter',
  game_server: 'registered servers',
  server_credential: 'one row per server',
  service_setting: 'a few settings',
  resource_file: 'one row per file of RESOURCE_DIR',
  resource_pack: 'pack descriptions',
  resource_index_state: 'one row',
  resource_signing_key: 'one row',
  staff_account: 'staff accounts',
  staff_session: "already bounded: a sign-in deletes its account's ended sessions and keeps a few others",
  staff_token: 'deleted when revoked',
  public_api_key: 'keys, kept when revoked (a few)',
  webhook: 'receivers (their deliveries are purged above)',
  readiness_probe: 'one row',
  database_identity: 'one row',
  retention_run: 'one row per purge',
  migrations: 'applied migrations',
};

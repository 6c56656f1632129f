import { ARCHIVE_BLOCK } from '../ranking';
import { historyBucket, historySlot } from '../upload/history/rating-history-layout';

/**
 * Every table that refers to a player, and what export and erasure do with its rows: the one map
 * PlayerDataRepository runs and test/e2e/player-privacy.e2e-spec.ts holds against the schema (every
 * foreign key to `player` and every column named `uid`, `…_uid`, `uuid` or `username` must be a
 * `table.column` listed here, or the test fails). docs/decisions.md "Erasing a player" says why
 * each table is deleted, anonymised or kept.
 *
 * SQL text is fixed here, never built from input: `$1` is the uid (text, cast where compared).
 * Erasure runs the entries in this order inside one transaction, the `player` row last.
 */
export interface PlayerDataEntry {
  /** The key of this table's rows in the export document. */
  key: string;
  table: string;
  /** The columns through which the table refers to the player (what the schema test looks for). */
  columns: string[];
  /** The condition that picks the rows referring to the player ($1: the uid). */
  where: string;
  /** The columns exported (secrets' hashes and other players' data left out), or null: not exported, with why. */
  export: { columns: string; orderBy: string } | { none: string };
  /**
   * `delete`: the rows go. `update`: the rows stay with `set` applied (another player's row that
   * names this one; `$2` is the pseudonym). `keep`: the rows stay as they are (why).
   */
  erase:
    | { delete: true }
    | { set: string }
    /** A function of the schema's owner that rewrites the rows ($1: the uid, $2: the pseudonym; answers the count). */
    | { call: string }
    | { keep: string };
}

const byUid = '"uid" = $1::bigint';

/** The archive's block tables (period.repository.ts ArchiveLayout) and the value arrays of each board's rank blocks. */
const ARCHIVE_BLOCK_TABLES = [
  {
    key: 'periodAtpArchive',
    rankBlocks: 'period_atp_rank_block',
    uidBlocks: 'period_atp_uid_block',
    keys: [],
    values: [['atps', 'atp']],
  },
  {
    key: 'periodChartArchive',
    rankBlocks: 'period_chart_rank_block',
    uidBlocks: 'period_chart_uid_block',
    keys: ['level_id'],
    values: [
      ['accs', 'acc'],
      ['ratings', 'rating'],
    ],
  },
] as const;

/** The player's row block and slot in rating_history_day (upload's history repository), and its position in the row's arrays. */
const HISTORY_BUCKET = historyBucket('$1::bigint');
const HISTORY_SLOT = historySlot('$1::bigint');
const HISTORY_AT = `array_position(slots, ${HISTORY_SLOT})`;

export const PLAYER_DATA: readonly PlayerDataEntry[] = [
  {
    key: 'sessionTakeovers',
    table: 'player_session_takeover',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'id, taken_at, from_server_id, to_server_id, proof', orderBy: 'id' },
    erase: { delete: true },
  },
  {
    key: 'sessions',
    table: 'player_session',
    columns: ['uid'],
    where: byUid,
    export: {
      columns:
        'id, server_session_id, mode, proven, created_at, renewed_at, token_expires_at, logged_out_at, logout_reason',
      orderBy: 'created_at, id',
    },
    erase: { delete: true },
  },
  {
    key: 'netToken',
    table: 'player_credential',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'issued_at', orderBy: 'issued_at' },
    erase: { delete: true },
  },
  {
    key: 'resumeToken',
    table: 'player_resume_token',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'proven, issued_at, expires_at', orderBy: 'issued_at' },
    erase: { delete: true },
  },
  {
    key: 'collections',
    table: 'player_collection',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'collection_key, granted_at', orderBy: 'collection_key' },
    erase: { delete: true },
  },
  {
    key: 'balanceHistory',
    table: 'balance_history',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'id, previous_watt_hour, watt_hour, server_id, created_at', orderBy: 'id' },
    erase: { delete: true },
  },
  {
    key: 'balance',
    table: 'player_balance',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'watt_hour, updated_at', orderBy: 'uid' },
    erase: { delete: true },
  },
  {
    key: 'bans',
    table: 'player_ban',
    columns: ['uid'],
    where: byUid,
    export: { columns: '*', orderBy: 'id' },
    erase: { delete: true },
  },
  {
    key: 'bests',
    table: 'player_chart_best',
    columns: ['uid'],
    where: byUid,
    export: { columns: '*', orderBy: 'level_id' },
    erase: { delete: true },
  },
  {
    key: 'rating',
    table: 'player_rating',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'atp, version', orderBy: 'uid' },
    erase: { delete: true },
  },
  {
    key: 'ratingHistory',
    table: 'rating_history_day',
    columns: ['bucket', 'slots'],
    where: `bucket = ${HISTORY_BUCKET} AND ${HISTORY_SLOT} = ANY (slots)`,
    export: {
      columns: `day, atp_e4[${HISTORY_AT}] AS atp_e4, site_rank[${HISTORY_AT}] AS site_rank, plays[${HISTORY_AT}] AS plays`,
      orderBy: 'day',
    },
    // The player's element leaves the four parallel arrays; the row stays for the block's other players.
    erase: {
      set: ['slots', 'atp_e4', 'site_rank', 'plays']
        .map((column) => `${column} = ${column}[:${HISTORY_AT} - 1] || ${column}[${HISTORY_AT} + 1:]`)
        .join(', '),
    },
  },
  {
    // The player's bests and ATP in each period of the boards (issue #44).
    key: 'periodBests',
    table: 'period_chart_best',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'period_id, level_id, acc, first_time_ms, record_id, rating', orderBy: 'period_id, level_id' },
    erase: { delete: true },
  },
  {
    key: 'periodRatings',
    table: 'period_rating',
    columns: ['uid'],
    where: byUid,
    export: { columns: 'period_id, atp', orderBy: 'period_id' },
    erase: { delete: true },
  },
  // Closed periods' boards in blocks (period.repository.ts ArchiveLayout): the player's entry leaves
  // its rank block's and its uid block's parallel arrays; the others keep the ranks they were
  // archived with. The rank blocks first: they are found through the uid blocks.
  ...ARCHIVE_BLOCK_TABLES.flatMap(({ key, rankBlocks, uidBlocks, keys, values }): PlayerDataEntry[] => {
    const board = (alias: string) => ['period_id', ...keys].map((column) => `${alias}.${column}`).join(', ');
    /** The entry's own table is unaliased in the export and erase statements. */
    const own = ['period_id', ...keys].join(', ');
    // The player's uid block of each archived board: the last block starting at or before the uid.
    const uidBlock = `SELECT ${board('u')}, max(u.first_uid) AS first_uid FROM "${uidBlocks}" u
      WHERE u.first_uid <= $1::bigint GROUP BY ${board('u')}`;
    const at = 'array_position(uids, $1::bigint)';
    const remove = (columns: readonly string[]) =>
      columns.map((column) => `${column} = ${column}[:${at} - 1] || ${column}[${at} + 1:]`).join(', ');
    return [
      {
        key: `${key}Ranks`,
        table: rankBlocks,
        columns: ['uids'],
        // The rank block holding the rank the player's uid block gives (ARCHIVE_BLOCK entries a block).
        where: `(${own}, block) IN (
          SELECT ${board('x')}, (x.ranks[array_position(x.uids, $1::bigint)] - 1) / ${ARCHIVE_BLOCK}
            FROM "${uidBlocks}" x WHERE (${board('x')}, x.first_uid) IN (${uidBlock}) AND $1::bigint = ANY (x.uids)
        ) AND $1::bigint = ANY (uids)`,
        export: {
          columns: `${own}, ranks[${at}] AS rank, ${values.map(([array, column]) => `${array}[${at}] AS ${column}`).join(', ')}`,
          orderBy: own,
        },
        erase: { set: remove(['ranks', 'uids', ...values.map(([array]) => array)]) },
      },
      {
        key: `${key}Uids`,
        table: uidBlocks,
        columns: ['first_uid', 'uids'],
        where: `(${own}, first_uid) IN (${uidBlock}) AND $1::bigint = ANY (uids)`,
        export: { none: `the entries of ${key}Ranks, by uid` },
        erase: { set: remove(['uids', 'ranks']) },
      },
    ];
  }),
  {
    // The seasons whose close rule granted the player their collection: the season stays, without the uid.
    key: 'seasonGrants',
    table: 'board_period',
    columns: ['granted_uids'],
    where: '$1::bigint = ANY ("granted_uids")',
    export: { columns: 'id, slug, grant_collection', orderBy: 'id' },
    erase: { set: '"granted_uids" = array_remove("granted_uids", $1::bigint)' },
  },
  {
    key: 'plays',
    table: 'play_record',
    columns: ['uid'],
    where: byUid,
    export: { columns: '*', orderBy: 'id' },
    erase: { delete: true },
  },
  {
    // Other players' plays against this player as their rival: theirs to keep, without the name.
    key: 'playsAsRival',
    table: 'play_record',
    columns: ['rival_uid'],
    where: '"rival_uid" = $1::bigint',
    export: { columns: 'id, level_id, rival_acc, is_win, received_at', orderBy: 'id' },
    erase: { set: '"rival_uid" = 0' },
  },
  {
    // kick_player frames waiting for a reconnecting game server.
    key: 'pendingKicks',
    table: 'realtime_outbox',
    columns: ['frame'],
    where: "\"frame\" ->> 'event' = 'kick_player' AND \"frame\" -> 'data' ->> 'uid' = $1",
    export: { columns: 'event_id, server_session_id, frame, created_at, delivered_at', orderBy: 'created_at' },
    erase: { delete: true },
  },
  {
    // Webhook deliveries whose event names the player (as its subject, or as the first place they
    // lost): the delivery log and what is still to be sent go (docs/decisions.md "Webhooks").
    key: 'webhookDeliveries',
    table: 'webhook_delivery',
    columns: ['payload'],
    where: "\"payload\" -> 'player' ->> 'uid' = $1 OR \"payload\" -> 'previous' -> 'player' ->> 'uid' = $1",
    export: { columns: 'id, event_type, payload, state, created_at, delivered_at', orderBy: 'created_at, id' },
    erase: { delete: true },
  },
  {
    // What staff did to the player: kept (accountability), under the pseudonym, with the free texts
    // (names, ban reasons, void reasons) left out of the summary.
    key: 'auditRows',
    table: 'admin_audit',
    columns: ['target', 'summary'],
    where: '"target" = \'player:\' || $1 OR ("target" LIKE \'play:%\' AND "summary" ->> \'uid\' = $1)',
    export: { columns: 'id, at, action, target, summary', orderBy: 'id' },
    // The rewrite is migrations/1795873000000-AuditPseudonymise.ts: the service's role may not
    // UPDATE the audit log itself (two-role set-up), and the function refuses a uid without tombstone.
    erase: { call: 'rhythmc_audit_pseudonymise' },
  },
  {
    // The in-process rank index's record of deleted ratings: a number and a sequence, which the
    // snapshot catch-up needs to drop the player on the next start.
    key: 'rankTombstones',
    table: 'rank_change_tombstone',
    columns: ['uid'],
    where: byUid,
    export: { none: 'internal bookkeeping of the rank index: a uid and a sequence number' },
    erase: { keep: 'the rank index snapshot catch-up reads it to drop the erased player' },
  },
  {
    key: 'erasure',
    table: 'player_erasure',
    columns: ['uid'],
    where: byUid,
    export: { none: 'written by the erasure itself' },
    erase: { keep: 'the tombstone: refuses later uploads for the uid' },
  },
  {
    key: 'player',
    table: 'player',
    columns: ['uid', 'uuid', 'username'],
    where: byUid,
    export: { columns: '*', orderBy: 'uid' },
    erase: { delete: true },
  },
];

/** `table.column` of every column the map covers (the schema test's other side). */
export function mappedPlayerColumns(): Set<string> {
  return new Set(PLAYER_DATA.flatMap((entry) => entry.columns.map((column) => `${entry.table}.${column}`)));
}

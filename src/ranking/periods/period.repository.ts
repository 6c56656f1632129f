import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PreparedQueries } from '../../database/prepared-queries';
import { ReadQueries } from '../../database/read-queries';
import { activeBan } from '../../player/active-ban.rule';
import { unbanned } from '../leaderboard.repository';
import { PERIOD_LOCK_KEY } from '../rank-sql';
import type { PeriodKind } from '../entities/board-period.entity';
import type { PeriodBoardRow, PeriodRow, PeriodWindowRow, SeasonFields, SeasonRow } from './period-rows';
import { toPeriodWindowRow, toSeasonRow } from './period-rows';

/** Writes answer their rows through a CTE: TypeORM answers a bare UPDATE … RETURNING as [rows, count]. */
const PERIOD_COLUMNS =
  'p.id, p.kind, p.slug, p.name, p.starts_at, p.ends_at, p.grant_collection, p.grant_top, p.closed_at, p.archived_at, p.archived_in_blocks, p.created_at, p.granted_uids';

/**
 * A period board's source: its live table and filter ($1 the period, $2 the chart), its order (the
 * all-time boards' site and track orders, decisions.md §5), the rows ahead of a row `m`, and its
 * archive. The live top N, the window's rank (a COUNT of the unbanned rows ahead) and the archive
 * written at the close all use the same order and the same ban rule (`unbanned`, as the
 * all-time boards), so the archive is the last live read.
 */
interface BoardSource {
  table: string;
  filter: string;
  columns: string;
  order: string;
  reverse: string;
  /** The rows ahead of the player `m` in `order`: the OR of aheadRanges. */
  ahead: string;
  /**
   * `ahead` cut into conditions that are each one range of the order index (a leading column
   * ahead, or the leading columns equal and the next one ahead), farthest first. PostgreSQL walks
   * one range of the index for each; for an OR across the index's columns it walks the whole
   * board instead (the neighbours' LIMIT k read 500,000 index entries from the far end at 1M).
   */
  aheadRanges: string[];
  /** behind's ranges, nearest first. */
  behindRanges: string[];
  /** The board's archive: its blocks by rank and by uid (ArchiveLayout). */
  archive: ArchiveLayout;
}

/**
 * A closed period's board in blocks (docs/decisions.md "Periods and seasons", archive layout):
 * `rankBlocks` holds block b = (rank − 1) / ARCHIVE_BLOCK as parallel arrays in rank order (ranks,
 * uids, then `values`), `uidBlocks` the same entries sorted by uid, ARCHIVE_BLOCK to a row keyed
 * by its first uid, with their ranks. Written at the close by one statement per board kind
 * (archiveBoards); read by a player's rank (one probe of uidBlocks) and a range of rank blocks.
 */
interface ArchiveLayout {
  rankBlocks: string;
  uidBlocks: string;
  /** The board's key beyond the period, in the blocks and the live table (a chart: level_id; $2 in reads). */
  keys: string[];
  /** Each value array of a rank block and the live column it holds. */
  values: Array<[array: string, column: string]>;
}

/** Entries per block row: a 1M-player board is 1,000 rows of each kind, a rank or a window reads one or two. */
export const ARCHIVE_BLOCK = 1000;

const ATP_AHEAD = ['t.atp > m.atp', 't.atp = m.atp AND t.uid < m.uid'];
const CHART_AHEAD = [
  't.acc > m.acc',
  't.acc = m.acc AND t.first_time_ms < m.first_time_ms',
  't.acc = m.acc AND t.first_time_ms = m.first_time_ms AND t.uid < m.uid',
];
const ATP_BEHIND = ['t.atp = m.atp AND t.uid > m.uid', 't.atp < m.atp'];
const CHART_BEHIND = [
  't.acc = m.acc AND t.first_time_ms = m.first_time_ms AND t.uid > m.uid',
  't.acc = m.acc AND t.first_time_ms > m.first_time_ms',
  't.acc < m.acc',
];
const anyOf = (conditions: string[]) => `(${conditions.map((condition) => `(${condition})`).join(' OR ')})`;

const ATP: BoardSource = {
  table: 'period_rating',
  filter: 't.period_id = $1',
  columns: 't.atp',
  order: 't.atp DESC, t.uid ASC',
  reverse: 't.atp ASC, t.uid DESC',
  ahead: anyOf(ATP_AHEAD),
  aheadRanges: ATP_AHEAD,
  behindRanges: ATP_BEHIND,
  archive: {
    rankBlocks: 'period_atp_rank_block',
    uidBlocks: 'period_atp_uid_block',
    keys: [],
    values: [['atps', 'atp']],
  },
};

const CHART: BoardSource = {
  table: 'period_chart_best',
  filter: 't.period_id = $1 AND t.level_id = $2',
  columns: 't.acc, t.rating',
  order: 't.acc DESC, t.first_time_ms ASC, t.uid ASC',
  reverse: 't.acc ASC, t.first_time_ms DESC, t.uid DESC',
  ahead: anyOf(CHART_AHEAD),
  aheadRanges: CHART_AHEAD,
  behindRanges: CHART_BEHIND,
  archive: {
    rankBlocks: 'period_chart_rank_block',
    uidBlocks: 'period_chart_uid_block',
    keys: ['level_id'],
    values: [
      ['accs', 'acc'],
      ['ratings', 'rating'],
    ],
  },
};

/** The first N ($last) unbanned rows of the live board, in board order. */
const liveTop = (
  s: BoardSource,
  last: string,
) => `SELECT NULL::bigint AS rank, t.uid, ${s.columns}, p.username, p.display_name
  FROM ${s.table} t JOIN player p ON p.uid = t.uid
 WHERE ${s.filter} AND ${unbanned('t')}
 ORDER BY ${s.order} LIMIT ${last}`;

/**
 * The unbanned rows ahead of the player `m`: the rows ahead, counted by index only (one count per
 * range of aheadRanges), less the banned ones among them, found from the active bans (one probe of
 * the board's primary key per banned player; a player has at most one unlifted ban,
 * UQ_player_ban_unlifted, so none is counted twice). Equal to counting the rows ahead that are
 * `unbanned`, which walked the heap for every row ahead and probed the bans for each: at 1M
 * players 0.3–1.1 s a window (docs/benchmarks.md "Closing a period and archived reads").
 */
const unbannedAhead = (s: BoardSource) => `(${s.aheadRanges
  .map((range) => `(SELECT count(*) FROM ${s.table} t WHERE ${s.filter} AND ${range})`)
  .join(' + ')})
  - (SELECT count(*) FROM player_ban b CROSS JOIN LATERAL (
       SELECT 1 FROM ${s.table} t WHERE ${s.filter} AND t.uid = b.uid AND ${s.ahead} OFFSET 0
     ) AS banned WHERE ${activeBan('b')})`;

/**
 * The $k unbanned rows nearest the player `m` on one side: the side's ranges from the player out,
 * each walked in `order` (away from the player) for at most k rows, then the first k of those by
 * range and order. Each walk starts at the player's place in the order index.
 */
const nearest = (s: BoardSource, ranges: string[], order: string, k: string) => `SELECT (n.r).* FROM (
      ${ranges
        .map(
          (range, seq) =>
            `(SELECT ${seq} AS seq, t AS r FROM ${s.table} t WHERE ${s.filter} AND ${range} AND ${unbanned('t')} ORDER BY ${order} LIMIT ${k})`,
        )
        .join('\n      UNION ALL ')}
    ) AS n ORDER BY n.seq, ${order.replace(/t\./g, '(n.r).')} LIMIT ${k}`;

/**
 * The player ($uid) with up to $k unbanned rows on each side (nearest) and its rank (1 + the
 * unbanned rows ahead: unbannedAhead), in one statement (one snapshot). No rows when the player has
 * no row on the board or is banned.
 */
const liveWindow = (s: BoardSource, uid: string, k: string) => `WITH m AS (
    SELECT t.* FROM ${s.table} t WHERE ${s.filter} AND t.uid = ${uid} AND ${unbanned('t')}
  ), w AS (
    (SELECT 0 AS part, t.* FROM m t)
    UNION ALL (SELECT 1, a.* FROM m CROSS JOIN LATERAL (${nearest(s, [...s.aheadRanges].reverse(), s.reverse, k)}) AS a)
    UNION ALL (SELECT 2, b.* FROM m CROSS JOIN LATERAL (${nearest(s, s.behindRanges, s.order, k)}) AS b)
  )
SELECT (SELECT ${unbannedAhead(s)} + 1 FROM m) AS rank,
       t.part, t.uid, ${s.columns}, p.username, p.display_name
  FROM w t JOIN player p ON p.uid = t.uid
 ORDER BY ${s.order}`;

/**
 * The live window statements of PeriodRepository.window (ATP: $1 the period, $2 the uid, $3 k; a
 * chart: $1 the period, $2 the level id, $3 the uid, $4 k). Exported for bench/periods/live-window.ts.
 */
export const LIVE_WINDOW_SQL = { atp: liveWindow(ATP, '$2', '$3'), chart: liveWindow(CHART, '$3', '$4') };

const archiveColumns = (s: BoardSource) => s.columns.replace(/t\./g, 'a.');

/** Rows of one board of the archive: `alias`.period_id = $1 and the board's keys = $2… */
const archiveFilter = ({ archive }: BoardSource, alias: string) =>
  [`${alias}.period_id = $1`, ...archive.keys.map((key, i) => `${alias}.${key} = $${i + 2}`)].join(' AND ');

/**
 * A rank block's entries as rows a(rank, uid, values…), in rank order, up to the one ranked `last`:
 * an entry ranked r sits at most at position r − 1,000·block (an erasure only moves entries
 * forward), so the arrays are cut there before unnesting. A top 10 unnests 10 entries, not 1,000.
 */
const blockEntries = ({ archive }: BoardSource, last: string) => {
  const upTo = `[:${last} - ${ARCHIVE_BLOCK} * b.block]`;
  return `unnest(b.ranks${upTo}, b.uids${upTo}, ${archive.values.map(([array]) => `b.${array}${upTo}`).join(', ')}) AS a(rank, uid, ${archive.values
    .map(([, column]) => column)
    .join(', ')})`;
};

/** The rank block holding `rank` (the same division the archive was cut by). */
const blockOf = (rank: string) => `(${rank} - 1) / ${ARCHIVE_BLOCK}`;

/**
 * The archived entries ranked 1..N ($last): the first blocks, no further. An erasure leaves a gap,
 * so after one a top N can hold fewer than N entries; the others keep the ranks they were archived
 * with (as the windows below).
 */
const archiveTop = (
  s: BoardSource,
  last: string,
) => `SELECT a.rank, a.uid, ${archiveColumns(s)}, p.username, p.display_name
  FROM ${s.archive.rankBlocks} b CROSS JOIN LATERAL ${blockEntries(s, `${last}::int`)}
  JOIN player p ON p.uid = a.uid
 WHERE ${archiveFilter(s, 'b')} AND b.block <= ${blockOf(`${last}::int`)} AND a.rank <= ${last}::int
 ORDER BY a.rank`;

/**
 * The archived player ($uid) and the entries ranked up to $k before and after (an erasure leaves
 * gaps in the ranks): the player's rank from their uid block (the last block starting at or before
 * the uid), then the one or two rank blocks around it. `OFFSET 0` keeps the rank a value computed
 * once: flattened into the join, the array search was evaluated again for each of the 1,000
 * entries unnested, each time reading both arrays (15 ms a window at 1M players, 0.3 ms with it).
 */
const archiveWindow = (
  s: BoardSource,
  uid: string,
  k: string,
) => `SELECT m.rank AS anchor, a.rank, a.uid, ${archiveColumns(s)}, p.username, p.display_name
  FROM (
    SELECT u.ranks[array_position(u.uids, ${uid}::bigint)] AS rank
      FROM (SELECT u.uids, u.ranks FROM ${s.archive.uidBlocks} u
             WHERE ${archiveFilter(s, 'u')} AND u.first_uid <= ${uid}::bigint
             ORDER BY u.first_uid DESC LIMIT 1) AS u
    OFFSET 0
  ) AS m
  CROSS JOIN LATERAL (
    SELECT a.* FROM ${s.archive.rankBlocks} b CROSS JOIN LATERAL ${blockEntries(s, `m.rank + ${k}::int`)}
     WHERE ${archiveFilter(s, 'b')} AND b.block >= ${blockOf(`m.rank - ${k}::int`)} AND b.block <= ${blockOf(`m.rank + ${k}::int`)}
       AND a.rank >= m.rank - ${k}::int AND a.rank <= m.rank + ${k}::int
  ) AS a
  JOIN player p ON p.uid = a.uid
 ORDER BY a.rank`;

/**
 * The archive of period $1, one board kind (every chart at once for CHART): the live read's order
 * and ban rule (`unbanned`), ranked once, then written as rank blocks and uid blocks in the same
 * statement (one snapshot). No row per rank and no btree entry per player: at 1M players the ATP
 * board is 1,000 + 1,000 rows (docs/benchmarks.md "Closing a period and archived reads").
 */
const archiveBoards = (s: BoardSource) => {
  const { archive } = s;
  const keys = archive.keys.map((key) => `${key}, `).join('');
  const partition = archive.keys.length > 0 ? `PARTITION BY ${archive.keys.map((key) => `t.${key}`).join(', ')} ` : '';
  const byKeys = (alias: string) => archive.keys.map((key) => `${alias}.${key}, `).join('');
  return `WITH ranked AS MATERIALIZED (
    SELECT ${byKeys('t')}row_number() OVER (${partition}ORDER BY ${s.order})::int AS rank, t.uid, ${s.columns}
      FROM ${s.table} t WHERE t.period_id = $1::bigint AND ${unbanned('t')}
  ), by_rank AS (
    INSERT INTO ${archive.rankBlocks} (period_id, ${keys}block, ranks, uids, ${archive.values.map(([array]) => array).join(', ')})
    SELECT $1::bigint, ${byKeys('r')}${blockOf('r.rank')}, array_agg(r.rank ORDER BY r.rank), array_agg(r.uid ORDER BY r.rank), ${archive.values
      .map(([, column]) => `array_agg(r.${column} ORDER BY r.rank)`)
      .join(', ')}
      FROM ranked r GROUP BY ${byKeys('r')}${blockOf('r.rank')}
  )
  INSERT INTO ${archive.uidBlocks} (period_id, ${keys}first_uid, uids, ranks)
  SELECT $1::bigint, ${byKeys('r')}min(r.uid), array_agg(r.uid ORDER BY r.uid), array_agg(r.rank ORDER BY r.uid)
    FROM (SELECT r.*, (row_number() OVER (${partition.replace(/t\./g, 'r.')}ORDER BY r.uid) - 1) / ${ARCHIVE_BLOCK} AS g
            FROM ranked r) AS r
   GROUP BY ${byKeys('r')}r.g`;
};

/** The archive statements of period $1 (PeriodRepository.archive). Exported for bench/periods/close.ts (its EXPLAIN ANALYZE). */
export const ARCHIVE_ATP_SQL = archiveBoards(ATP);
export const ARCHIVE_CHARTS_SQL = archiveBoards(CHART);

/** The archive's statements may run this long (client side; bench:periods:close measured 37–58 s at 1M players, loaded). */
const ARCHIVE_TIMEOUT_MS = 600_000;
/**
 * Sort memory of the archive's transaction: its three sorts of the board (by order, by rank block,
 * by uid) spilled to disk at 1M players with the default 4 MB, and with 64 MB (in-memory sort
 * tuples are ~3× the spilled bytes).
 */
const ARCHIVE_WORK_MEM = '256MB';

/** Which board of a period: the ATP board, or a chart's. */
export type PeriodBoard = { board: 'atp' } | { board: 'chart'; levelId: number };

const sourceOf = (board: PeriodBoard) => (board.board === 'atp' ? ATP : CHART);
const paramsOf = (periodId: string, board: PeriodBoard) =>
  board.board === 'atp' ? [periodId] : [periodId, board.levelId];

/**
 * Periods of the boards (board_period) and their boards: live (period_rating, period_chart_best,
 * written by the upload's statement) and archived (the four block tables of ArchiveLayout, written
 * at the close). Every live read walks the period's order index.
 */
@Injectable()
export class PeriodRepository {
  /**
   * `statements` on the primary; `reads` on the read replica within its lag bound (ReadQueries):
   * the period rows and boards a board read resolves and shows, each read by SQL alone.
   */
  constructor(
    private readonly statements: PreparedQueries,
    private readonly reads: ReadQueries,
  ) {}

  /**
   * The calendar period of `kind` containing `at` (the latest-starting one, should the time zone
   * have changed); `primary`: right after ensureCalendar, whose row a replica may not have yet.
   */
  async calendarPeriod(kind: PeriodKind, at: Date, { primary = false } = {}): Promise<PeriodRow | null> {
    const rows = await (primary ? this.statements : this.reads).run<PeriodRow>(
      'period_calendar',
      `SELECT ${PERIOD_COLUMNS} FROM board_period p WHERE p.kind = $1 AND p.starts_at <= $2 AND p.ends_at > $2
        ORDER BY p.starts_at DESC LIMIT 1`,
      [kind, at],
    );
    return rows[0] ?? null;
  }

  /** `primary`: right after a write of this instance's, which a replica may not have yet. */
  async byId(id: string, { primary = false } = {}): Promise<PeriodRow | null> {
    const rows = await (primary ? this.statements : this.reads).run<PeriodRow>(
      'period_by_id',
      `SELECT ${PERIOD_COLUMNS} FROM board_period p WHERE p.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async seasonBySlug(slug: string): Promise<PeriodRow | null> {
    const rows = await this.reads.run<PeriodRow>(
      'period_by_slug',
      `SELECT ${PERIOD_COLUMNS} FROM board_period p WHERE p.slug = $1 AND p.kind = 'season'`,
      [slug],
    );
    return rows[0] ?? null;
  }

  /** Creates the day, week and month containing `at` in `timeZone` unless they exist (any instance, any number of times). */
  async ensureCalendar(at: Date, timeZone: string): Promise<void> {
    await this.statements.run('period_ensure', 'SELECT rhythmc_ensure_calendar_periods($1, $2)', [at, timeZone]);
  }

  /** Open periods whose end has passed at `at`. */
  async due(at: Date): Promise<string[]> {
    const rows = await this.statements.run<{ id: string }>(
      'period_due',
      'SELECT p.id FROM board_period p WHERE p.closed_at IS NULL AND p.ends_at <= $1 ORDER BY p.ends_at, p.id',
      [at],
    );
    return rows.map((row) => row.id);
  }

  /** Closed periods whose boards are not archived yet. */
  async unarchived(): Promise<string[]> {
    const rows = await this.statements.run<{ id: string }>(
      'period_unarchived',
      'SELECT p.id FROM board_period p WHERE p.closed_at IS NOT NULL AND NOT p.archived_in_blocks ORDER BY p.id',
      [],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Closes the period at `at` (in the caller's transaction): waits for the uploads writing into
   * periods to commit (the exclusive period lock), then marks it closed unless another instance
   * did or its end is no longer past (staff moved a season's end). The row when this call closed
   * it, null otherwise.
   */
  async close(id: string, at: Date, manager: EntityManager): Promise<PeriodRow | null> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [PERIOD_LOCK_KEY]);
    const rows = await manager.query<PeriodRow[]>(
      `WITH changed AS (UPDATE board_period p SET closed_at = $2 WHERE p.id = $1 AND p.closed_at IS NULL AND p.ends_at <= $2 RETURNING p.*)
       SELECT ${PERIOD_COLUMNS} FROM changed p`,
      [id, at],
    );
    return rows[0] ?? null;
  }

  /**
   * Closes a season before its end (in the caller's transaction), as `close` does, and moves its
   * end to `at` so that its boards say when it ended. Only an open season that has started: the
   * row when this call closed it, null otherwise.
   */
  async closeSeasonEarly(id: string, at: Date, manager: EntityManager): Promise<PeriodRow | null> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [PERIOD_LOCK_KEY]);
    const rows = await manager.query<PeriodRow[]>(
      `WITH changed AS (UPDATE board_period p SET closed_at = $2, ends_at = LEAST(p.ends_at, $2)
        WHERE p.id = $1 AND p.kind = 'season' AND p.closed_at IS NULL AND p.starts_at < $2 RETURNING p.*)
       SELECT ${PERIOD_COLUMNS} FROM changed p`,
      [id, at],
    );
    return rows[0] ?? null;
  }

  /** Stores what a season's close rule granted (in the freezing transaction), ascending. */
  async recordGrant(id: string, uids: readonly string[], manager: EntityManager): Promise<void> {
    await manager.query('UPDATE board_period SET granted_uids = $2::bigint[] WHERE id = $1', [id, uids]);
  }

  /** The first `top` players of an archived period's ATP board, by rank (in the archiving transaction). */
  async archivedAtpTop(id: string, top: number, manager: EntityManager): Promise<string[]> {
    const rows = await manager.query<Array<{ uid: string }>>(
      `SELECT a.uid FROM period_atp_rank_block b
        CROSS JOIN LATERAL unnest(b.ranks[:$2::int - ${ARCHIVE_BLOCK} * b.block], b.uids[:$2::int - ${ARCHIVE_BLOCK} * b.block]) AS a(rank, uid)
        WHERE b.period_id = $1 AND b.block <= ${blockOf('$2::int')} AND a.rank <= $2::int ORDER BY a.rank`,
      [id, top],
    );
    return rows.map((row) => String(row.uid));
  }

  /** Seasons by id ascending after `afterId` (a list page: `limit` rows). */
  listSeasons(afterId: string | undefined, limit: number): Promise<PeriodRow[]> {
    return this.statements.run<PeriodRow>(
      'period_list_seasons',
      `SELECT ${PERIOD_COLUMNS} FROM board_period p
        WHERE p.kind = 'season' AND p.id > $1 ORDER BY p.id LIMIT $2`,
      [afterId ?? '0', limit],
    );
  }

  /**
   * Stops the writes into periods to the caller's commit (the exclusive period lock). Taken before a
   * period's row lock by every write that takes both (the job's close takes it first too), so two
   * of them never wait on each other in opposite orders.
   */
  async lockPeriodWrites(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [PERIOD_LOCK_KEY]);
  }

  /**
   * A season by id, locked to the caller's commit (staff writes). `wait` false: a row another
   * transaction holds (an archive, for its whole length) fails at once with 55P03 instead of waiting.
   */
  async lockSeason(id: string, manager: EntityManager, wait = true): Promise<SeasonRow | null> {
    const rows = await manager.query<PeriodRow[]>(
      `SELECT ${PERIOD_COLUMNS} FROM board_period p WHERE p.id = $1 AND p.kind = 'season' FOR UPDATE${wait ? '' : ' NOWAIT'}`,
      [id],
    );
    return rows.length === 0 ? null : toSeasonRow(rows[0]);
  }

  async insertSeason(season: SeasonFields & { slug: string }, manager: EntityManager): Promise<PeriodRow> {
    const rows = await manager.query<PeriodRow[]>(
      `INSERT INTO board_period AS p (kind, slug, name, starts_at, ends_at, grant_collection, grant_top)
       VALUES ('season', $1, $2, $3, $4, $5, $6) RETURNING ${PERIOD_COLUMNS}`,
      [season.slug, season.name, season.startsAt, season.endsAt, season.grantCollection, season.grantTop],
    );
    return rows[0];
  }

  /** Writes a season's changeable fields (the caller holds its lock and has checked them). */
  async updateSeason(id: string, season: SeasonFields, manager: EntityManager): Promise<PeriodRow> {
    const rows = await manager.query<PeriodRow[]>(
      `WITH changed AS (UPDATE board_period p SET name = $2, starts_at = $3, ends_at = $4, grant_collection = $5, grant_top = $6
        WHERE p.id = $1 RETURNING p.*)
       SELECT ${PERIOD_COLUMNS} FROM changed p`,
      [id, season.name, season.startsAt, season.endsAt, season.grantCollection, season.grantTop],
    );
    return rows[0];
  }

  /**
   * Deletes a season that has not started at `at` (under the exclusive period lock, so no upload
   * is counting into it): true when deleted. Its period rows, which no play can have written, go
   * with it.
   */
  async deleteUnstartedSeason(id: string, at: Date, manager: EntityManager): Promise<boolean> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [PERIOD_LOCK_KEY]);
    const rows = await manager.query<Array<{ id: string }>>(
      `WITH deleted AS (
         DELETE FROM board_period p WHERE p.id = $1 AND p.kind = 'season' AND p.closed_at IS NULL AND p.starts_at > $2
         RETURNING p.id
       ) SELECT id FROM deleted`,
      [id, at],
    );
    if (rows.length === 0) return false;
    await manager.query('DELETE FROM period_rating WHERE period_id = $1', [id]);
    await manager.query('DELETE FROM period_chart_best WHERE period_id = $1', [id]);
    return true;
  }

  /**
   * Archives a closed period's boards in blocks (in the caller's transaction) unless another
   * instance did: the row when this call archived it (the row stays locked to the commit), null
   * otherwise. `archived_before`: the release before the blocks had archived it in rows (dropped
   * since, migration DropPeriodArchiveRows) and ran its close rule then; this call writes the blocks from the live rows, which no
   * play changes after the close.
   */
  async archive(id: string, manager: EntityManager): Promise<(PeriodRow & { archived_before: boolean }) | null> {
    // The row locked first, so that what it held before (archived in rows by the release before the
    // blocks or not) is read after any other instance's archive committed, not from this statement's snapshot.
    const [current] = await manager.query<Array<{ archived_before: boolean }>>(
      `SELECT p.archived_at IS NOT NULL AS archived_before FROM board_period p
        WHERE p.id = $1 AND p.closed_at IS NOT NULL AND NOT p.archived_in_blocks FOR UPDATE`,
      [id],
    );
    if (!current) return null;
    const rows = await manager.query<PeriodRow[]>(
      `WITH changed AS (
         UPDATE board_period p SET archived_at = coalesce(p.archived_at, now()), archived_in_blocks = true
          WHERE p.id = $1 RETURNING p.*
       )
       SELECT ${PERIOD_COLUMNS} FROM changed p`,
      [id],
    );
    // A big period's archive sorts millions of rows (1M players: seconds): its own timeout, not the
    // pool's 15 s that would roll it back on every try, and room to sort in memory. The ATP board
    // and the chart boards are written at once on two connections reading this transaction's
    // snapshot (the same last live read), each clearing what a failed try left: blocks are read
    // only once this transaction commits archived_in_blocks. No JIT: compiling the two statements
    // cost 0.4–0.6 s each and saved nothing (docs/benchmarks.md "Closing a period").
    const part = (blocks: ArchiveLayout, build: string) => [
      { text: `DELETE FROM ${blocks.rankBlocks} WHERE period_id = $1`, params: [id] },
      { text: `DELETE FROM ${blocks.uidBlocks} WHERE period_id = $1`, params: [id] },
      { text: build, params: [id] },
    ];
    await this.statements.runLongInParts(
      manager,
      [part(ATP.archive, ARCHIVE_ATP_SQL), part(CHART.archive, ARCHIVE_CHARTS_SQL)],
      ARCHIVE_TIMEOUT_MS,
      { work_mem: ARCHIVE_WORK_MEM, jit: 'off' },
    );
    return { ...rows[0], archived_before: current.archived_before };
  }

  /**
   * Refreshes the archive tables' planner statistics (after an archive's commit): a few thousand
   * block rows at 1M players, so milliseconds. A fresh archive without statistics was read with
   * whole-table plans in the row layout.
   */
  async analyzeArchives(): Promise<void> {
    await this.statements.run(
      'period_analyze_archives',
      'ANALYZE period_atp_rank_block, period_atp_uid_block, period_chart_rank_block, period_chart_uid_block',
      [],
    );
  }

  /** The top `limit` of a period's board: archived when `archived`, else live. */
  top(periodId: string, board: PeriodBoard, limit: number, archived: boolean): Promise<PeriodBoardRow[]> {
    const source = sourceOf(board);
    const params = paramsOf(periodId, board);
    const last = `$${params.length + 1}`;
    const name = `period_top_${board.board}_${archived ? 'archive' : 'live'}`;
    return this.reads.run<PeriodBoardRow>(name, archived ? archiveTop(source, last) : liveTop(source, last), [
      ...params,
      limit,
    ]);
  }

  /**
   * The window of `k` around the player `uid` and its rank: null when the player has no rank on
   * the board (no row, or banned on a live board).
   */
  async window(
    periodId: string,
    board: PeriodBoard,
    uid: string,
    k: number,
    archived: boolean,
  ): Promise<{ rank: number; rows: PeriodWindowRow[] } | null> {
    const source = sourceOf(board);
    const params = paramsOf(periodId, board);
    const [u, n] = [`$${params.length + 1}`, `$${params.length + 2}`];
    const name = `period_window_${board.board}_${archived ? 'archive' : 'live'}`;
    if (archived) {
      const rows = await this.reads.run<PeriodBoardRow & { anchor: number }>(name, archiveWindow(source, u, n), [
        ...params,
        uid,
        k,
      ]);
      return rows.length === 0 ? null : { rank: Number(rows[0].anchor), rows: rows.map(toPeriodWindowRow) };
    }
    const rows = await this.reads.run<PeriodBoardRow & { part: number }>(name, LIVE_WINDOW_SQL[board.board], [
      ...params,
      uid,
      k,
    ]);
    if (rows.length === 0) return null;
    const rank = Number(rows[0].rank);
    const ahead = rows.filter((row) => row.part === 1).length;
    return { rank, rows: rows.map((row, i) => toPeriodWindowRow({ ...row, rank: String(rank - ahead + i) })) };
  }
}

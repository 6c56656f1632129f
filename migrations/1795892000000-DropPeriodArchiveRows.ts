import { MigrationInterface, QueryRunner } from 'typeorm';

/** One board kind of the archive: its block tables, the columns naming a board, its value columns (row and array). */
interface ArchiveKind {
  rows: string;
  rankBlocks: string;
  uidBlocks: string;
  keys: readonly string[];
  values: readonly (readonly [array: string, column: string])[];
}

const KINDS: readonly ArchiveKind[] = [
  {
    rows: 'period_atp_archive',
    rankBlocks: 'period_atp_rank_block',
    uidBlocks: 'period_atp_uid_block',
    keys: ['period_id'],
    values: [['atps', 'atp']],
  },
  {
    rows: 'period_chart_archive',
    rankBlocks: 'period_chart_rank_block',
    uidBlocks: 'period_chart_uid_block',
    keys: ['period_id', 'level_id'],
    values: [
      ['accs', 'acc'],
      ['ratings', 'rating'],
    ],
  },
];

/** Entries per block, as the release that wrote them (ARCHIVE_BLOCK of src/ranking/periods/period.repository.ts). */
const BLOCK = 1000;

/**
 * Erasures that can have left entries in the blocks were answered after the blocks' migration
 * copied the rows, so after that migration was written: its timestamp (1795890000000 ms, 2026-11-28
 * 18:20 UTC) bounds them from below. The older ones (their rows deleted before the copy) are not
 * looked for: each costs a probe of every archived board (20 s for 5,000 erasures over 2,010 boards
 * and 20M archived entries, at load 2–3).
 */
const BLOCKS_WRITTEN = 'to_timestamp(1795890000)';

/**
 * The contract step of the archive's blocks (docs/decisions.md "Rolling upgrades", pending
 * contract steps; `1795890000000-PeriodArchiveBlocks` was the expand step): the row layout of
 * closed periods' boards, `period_atp_archive` and `period_chart_archive`, is dropped. The release
 * before this one (`.ci/previous-release`) reads and writes blocks only.
 *
 * First, every uid of `player_erasure` erased since the blocks (BLOCKS_WRITTEN) leaves the four
 * block tables: an erasure answered by the release before the blocks, while instances rolled,
 * deleted the player's rows from the row tables only, and the upgrade had already copied them
 * into blocks. The player's uid block of each
 * board is found by range (the blocks' first uids, read from the primary key, and one probe of
 * `player_erasure` per block: no board's arrays are read unless an erased uid falls in its range),
 * then the rank block holding the rank it gives; the entry leaves both blocks' parallel arrays,
 * the others keep their ranks (as an erasure does, src/privacy/player-data.map.ts). Written out
 * here rather than imported: a migration keeps the SQL of its day.
 *
 * `down` recreates the row tables and copies every archived period's blocks back into them.
 */
export class DropPeriodArchiveRows1795892000000 implements MigrationInterface {
  name = 'DropPeriodArchiveRows1795892000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const kind of KINDS) {
      await queryRunner.query(eraseFromBlocks(kind));
    }
    await queryRunner.query(`
            DROP INDEX "public"."IDX_period_chart_archive_uid"
        `);
    await queryRunner.query(`
            DROP TABLE "period_chart_archive"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_period_atp_archive_uid"
        `);
    await queryRunner.query(`
            DROP TABLE "period_atp_archive"
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "period_atp_archive" (
                "period_id" bigint NOT NULL,
                "rank" integer NOT NULL,
                "uid" bigint NOT NULL,
                "atp" numeric(10, 4) NOT NULL,
                CONSTRAINT "PK_89dc365a5bbef05218cd065a878" PRIMARY KEY ("period_id", "rank")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_period_atp_archive_uid" ON "period_atp_archive" ("period_id", "uid")
        `);
    await queryRunner.query(`
            CREATE TABLE "period_chart_archive" (
                "period_id" bigint NOT NULL,
                "level_id" integer NOT NULL,
                "rank" integer NOT NULL,
                "uid" bigint NOT NULL,
                "acc" double precision NOT NULL,
                "rating" double precision NOT NULL,
                CONSTRAINT "PK_4c9ea9ba8b9cfc2af4032e04c59" PRIMARY KEY ("period_id", "level_id", "rank")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_period_chart_archive_uid" ON "period_chart_archive" ("period_id", "level_id", "uid")
        `);
    for (const { rows, rankBlocks, keys, values } of KINDS) {
      const columns = values.map(([, column]) => column);
      await queryRunner.query(`
            INSERT INTO "${rows}" (${[...keys, 'rank', 'uid', ...columns].join(', ')})
            SELECT ${keys.map((key) => `b.${key}`).join(', ')}, e.rank, e.uid, ${columns.map((column) => `e.${column}`).join(', ')}
              FROM "${rankBlocks}" b
              JOIN board_period p ON p.id = b.period_id AND p.archived_in_blocks
             CROSS JOIN LATERAL unnest(b.ranks, b.uids, ${values.map(([array]) => `b.${array}`).join(', ')})
                   AS e(rank, uid, ${columns.join(', ')})
        `);
    }
  }
}

/** One statement: the erased uids leave a board kind's rank blocks and uid blocks (both read in the same snapshot). */
function eraseFromBlocks({ rankBlocks, uidBlocks, keys, values }: ArchiveKind): string {
  const board = (alias: string) => keys.map((key) => `${alias}.${key}`).join(', ');
  const same = (left: string, right: string) => keys.map((key) => `${left}.${key} = ${right}.${key}`).join(' AND ');
  /** The arrays of a block without the entries of `gone` (uids), in their order; an emptied block keeps empty arrays. */
  const without = (alias: string, arrays: readonly string[]) => `(
           SELECT ${arrays.map((array) => `coalesce(array_agg(e.${array} ORDER BY e.o), '{}')`).join(', ')}
             FROM unnest(${arrays.map((array) => `${alias}.${array}`).join(', ')}) WITH ORDINALITY AS e(${arrays.join(', ')}, o)
            WHERE e.uids <> ALL (g.gone))`;
  const rankArrays = ['ranks', 'uids', ...values.map(([array]) => array)];
  return `
    WITH ranged AS (
      SELECT ${board('b')}, b.first_uid,
             lead(b.first_uid) OVER (PARTITION BY ${board('b')} ORDER BY b.first_uid) AS next_uid
        FROM "${uidBlocks}" b
    ), hit AS (
      SELECT ${board('r')}, r.first_uid, x.uid, x.ranks[array_position(x.uids, x.uid)] AS rank
        FROM ranged r
        CROSS JOIN LATERAL (
          SELECT e.uid, u.uids, u.ranks
            FROM player_erasure e
            JOIN "${uidBlocks}" u ON ${same('u', 'r')} AND u.first_uid = r.first_uid
           WHERE e.uid >= r.first_uid AND (r.next_uid IS NULL OR e.uid < r.next_uid) AND e.erased_at >= ${BLOCKS_WRITTEN}
             AND e.uid = ANY (u.uids)
        ) x
    ), rank_blocks AS (
      UPDATE "${rankBlocks}" b SET (${rankArrays.join(', ')}) = ${without('b', rankArrays)}
        FROM (SELECT ${board('h')}, (h.rank - 1) / ${BLOCK} AS block, array_agg(h.uid) AS gone FROM hit h
               GROUP BY ${board('h')}, (h.rank - 1) / ${BLOCK}) g
       WHERE ${same('b', 'g')} AND b.block = g.block
    )
    UPDATE "${uidBlocks}" b SET (uids, ranks) = ${without('b', ['uids', 'ranks'])}
      FROM (SELECT ${board('h')}, h.first_uid, array_agg(h.uid) AS gone FROM hit h GROUP BY ${board('h')}, h.first_uid) g
     WHERE ${same('b', 'g')} AND b.first_uid = g.first_uid
  `;
}

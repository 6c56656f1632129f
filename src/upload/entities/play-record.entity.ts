import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/**
 * One uploaded gameplay record, stored whole (every payload field, the four judgement counters,
 * the server as reported, both client times, when it arrived and through which sessions) so that
 * ratings can be recomputed from it at any time. A record is the same record when player,
 * level and `payload.time` are the same: the unique constraint stores it once.
 *
 * A record counts (towards bests, ATP and ranks) when it passed, failed no consistency check or
 * was approved, is not voided, and its chart is not a placeholder (docs/decisions.md "Score
 * integrity"; the rule is `recordCounts` / `COUNTED_RECORD` in counted-record.rule.ts).
 */
@Entity({ name: 'play_record' })
@Index('IDX_play_record_flagged', ['id'], { where: 'cardinality(flags) > 0' })
/** A player's plays newest first (the public profile's recent plays), without a scan of all of them. */
@Index('IDX_play_record_uid_recent', ['uid', 'id'])
/** BRIN on received_at: the rating history's daily snapshot reads one day's plays (migrations/1795882000000-RatingHistory.ts; TypeORM cannot declare BRIN). */
@Index('IDX_play_record_received_brin', { synchronize: false })
/** Retention: failed plays without a review mark (they can never count; counted-record.rule.ts NEVER_COUNTS_RECORD), oldest first. */
@Index('IDX_play_record_never_counts', ['receivedAt'], {
  where: 'NOT pass AND cardinality(flags) = 0 AND voided_at IS NULL',
})
@Unique('UQ_play_record_player_level_time', ['uid', 'levelId', 'timeMs'])
export class PlayRecordEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  /** payload.levelID; the chart row exists (a placeholder at worst) but is not a foreign key: Upload only reads the catalog. */
  @Column({ name: 'level_id', type: 'int' })
  levelId!: number;

  /** payload.time: when the play ended, epoch milliseconds. */
  @Column({ name: 'time_ms', type: 'bigint' })
  timeMs!: string;

  /** player.timestamp: when the plugin built the record, epoch milliseconds. */
  @Column({ name: 'player_timestamp_ms', type: 'bigint' })
  playerTimestampMs!: string;

  @Column({ type: 'double precision' })
  acc!: number;

  /** Only passed plays count for ratings and ranks. */
  @Column({ type: 'boolean' })
  pass!: boolean;

  @Column({ name: 'full_combo', type: 'boolean' })
  fullCombo!: boolean;

  @Column({ name: 'all_perfect', type: 'boolean' })
  allPerfect!: boolean;

  /** The client's own opinion, kept for the record; the service decides personal bests itself. */
  @Column({ name: 'is_new_record', type: 'boolean' })
  isNewRecord!: boolean;

  @Column({ name: 'max_combo', type: 'int' })
  maxCombo!: number;

  @Column({ name: 'is_rival', type: 'boolean' })
  isRival!: boolean;

  @Column({ name: 'is_win', type: 'boolean' })
  isWin!: boolean;

  @Column({ name: 'rival_uid', type: 'bigint' })
  rivalUid!: string;

  @Column({ name: 'rival_acc', type: 'double precision' })
  rivalAcc!: number;

  @Column({ name: 'tap_perfect', type: 'int' })
  tapPerfect!: number;

  @Column({ name: 'tap_great', type: 'int' })
  tapGreat!: number;

  @Column({ name: 'tap_miss', type: 'int' })
  tapMiss!: number;

  @Column({ name: 'hold_perfect', type: 'int' })
  holdPerfect!: number;

  @Column({ name: 'hold_great', type: 'int' })
  holdGreat!: number;

  @Column({ name: 'hold_miss', type: 'int' })
  holdMiss!: number;

  @Column({ name: 'dodge_perfect', type: 'int' })
  dodgePerfect!: number;

  @Column({ name: 'dodge_great', type: 'int' })
  dodgeGreat!: number;

  @Column({ name: 'dodge_miss', type: 'int' })
  dodgeMiss!: number;

  @Column({ name: 'look_perfect', type: 'int' })
  lookPerfect!: number;

  @Column({ name: 'look_great', type: 'int' })
  lookGreat!: number;

  @Column({ name: 'look_miss', type: 'int' })
  lookMiss!: number;

  @Column({ name: 'player_arena', type: 'varchar', length: 64 })
  playerArena!: string;

  /** The calling session's server (equal to the record's server.serverID, which is checked). */
  @Column({ name: 'server_id', type: 'int' })
  serverId!: number;

  /** server.serverName and server.country as the record reported them. */
  @Column({ name: 'server_name', type: 'varchar', length: 64 })
  serverName!: string;

  @Column({ name: 'server_country', type: 'varchar', length: 64 })
  serverCountry!: string;

  /** The server session and player session the upload was accepted under (audit). */
  @Column({ name: 'server_session_id', type: 'uuid' })
  serverSessionId!: string;

  @Column({ name: 'player_session_id', type: 'uuid' })
  playerSessionId!: string;

  /** When the service accepted it: the tie-break time of the best it reaches. */
  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;

  /** The consistency checks it failed when it arrived ([]: none); a flagged record counts only once approved. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  flags!: string[];

  /** When an admin approved it despite its flags. */
  @Column({ name: 'approved_at', type: 'timestamptz', nullable: true })
  approvedAt!: Date | null;

  /** When an admin voided it: it counts for nothing until restored. */
  @Column({ name: 'voided_at', type: 'timestamptz', nullable: true })
  voidedAt!: Date | null;

  @Column({ name: 'void_reason', type: 'varchar', length: 200, nullable: true })
  voidReason!: string | null;
}

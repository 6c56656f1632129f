import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A deleted player_rating row (the player has no counted play left), written by a trigger with the
 * next value of rank_change_seq: what the in-process rank index's snapshot catch-up reads besides
 * player_rating.change_seq (docs/decisions.md "Rank index at start-up").
 */
@Entity({ name: 'rank_change_tombstone' })
export class RankChangeTombstoneEntity {
  @PrimaryColumn({ name: 'change_seq', type: 'bigint', primaryKeyConstraintName: 'PK_rank_change_tombstone' })
  changeSeq!: string;

  @Column({ type: 'bigint' })
  uid!: string;
}

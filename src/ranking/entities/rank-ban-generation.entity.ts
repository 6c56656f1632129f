import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: a counter bumped in the same transaction as every change of `player_ban` (a
 * statement trigger of the Upload migration), and by Upload when a banned player's rank keys
 * change. Each instance's view of the banned players' rank keys is valid while it has seen the
 * current generation and no ban in it has run out (docs/decisions.md "Score upload").
 */
@Entity({ name: 'rank_ban_generation' })
@Check('CHK_rank_ban_generation_single_row', '"id" = 1')
export class RankBanGenerationEntity {
  @PrimaryColumn({ type: 'smallint', default: 1 })
  id!: number;

  @Column({ type: 'bigint', default: 0 })
  generation!: string;
}

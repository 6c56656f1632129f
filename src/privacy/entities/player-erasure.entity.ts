import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The tombstone of an erased player (docs/decisions.md "Erasing a player"): the uid that no longer
 * exists, so that a later upload or sync for it is refused with a clear 401, and the pseudonym its
 * audit rows now carry. Nothing else of the player is kept: no name, no Mojang uuid.
 */
@Entity({ name: 'player_erasure' })
@Index('IDX_player_erasure_pseudonym', ['pseudonym'], { unique: true })
export class PlayerErasureEntity {
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_player_erasure' })
  uid!: string;

  /** `erased-` and 12 random hex digits: the name of the player in admin_audit from now on. */
  @Column({ type: 'varchar', length: 32 })
  pseudonym!: string;

  @CreateDateColumn({ name: 'erased_at', type: 'timestamptz' })
  erasedAt!: Date;
}

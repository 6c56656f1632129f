import { CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';
import type { CollectionEntity } from './collection.entity';

/** A collection a player has unlocked for good (grants are never removed by sync). */
@Entity({ name: 'player_collection' })
export class PlayerCollectionEntity {
  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @PrimaryColumn({ name: 'collection_key', type: 'varchar', length: 128 })
  collectionKey!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @ManyToOne('CollectionEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'collection_key' })
  collection?: CollectionEntity;

  @CreateDateColumn({ name: 'granted_at', type: 'timestamptz' })
  grantedAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A player account. `uid` is the platform player id (bigint, carried as a string in code so it
 * never loses precision). Options: `continueEnabled` is a column, `sound` and
 * `songSelectionState` are JSON values, unknown option keys live in `extraOptions`.
 */
@Entity({ name: 'player' })
/**
 * `lower(username) text_pattern_ops`: the public API's name lookups and prefix search, in byte order
 * (migrations/1795860000000-PublicApi.ts). An expression index TypeORM cannot declare: `synchronize: false`.
 */
@Index('IDX_player_username_lower', { synchronize: false })
export class PlayerEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  uid!: string;

  /** Mojang account UUID (ONLINE players); null for accounts that only use Net Tokens. */
  @Column({ type: 'uuid', nullable: true, unique: true })
  uuid!: string | null;

  @Column({ type: 'varchar', length: 32 })
  username!: string;

  /** '' means "same as username". */
  @Column({ name: 'display_name', type: 'varchar', length: 64, default: '' })
  displayName!: string;

  /** Player data version stored by the last successful login. */
  @Column({ name: 'data_version', type: 'int', default: 0 })
  dataVersion!: number;

  /** Warning level shown by the client when greater than 0. */
  @Column({ type: 'int', default: 0 })
  banstate!: number;

  @Column({ name: 'continue_enabled', type: 'boolean', default: false })
  continueEnabled!: boolean;

  @Column({ type: 'jsonb', nullable: true })
  sound!: Record<string, unknown> | null;

  @Column({ name: 'song_selection_state', type: 'jsonb', nullable: true })
  songSelectionState!: Record<string, unknown> | null;

  @Column({ name: 'extra_options', type: 'jsonb', default: {} })
  extraOptions!: Record<string, unknown>;

  /** Key of the selected prefix title collection, or null. */
  @Column({ name: 'prefix_key', type: 'varchar', length: 128, nullable: true })
  prefixKey!: string | null;

  /** Key of the selected suffix title collection, or null. */
  @Column({ name: 'suffix_key', type: 'varchar', length: 128, nullable: true })
  suffixKey!: string | null;

  /**
   * The home server: a game server of the same group and country as the player's latest login's
   * (any mode, handovers and takeovers included), written only when a login's server has another
   * scope (rhythmc_player_move_home). Scoped boards (a server group, a country) rank players by
   * it. null: no login since it was introduced.
   */
  @Column({ name: 'home_server_id', type: 'int', nullable: true })
  homeServerId!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

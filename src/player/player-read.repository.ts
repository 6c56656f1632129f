import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ReadQueries } from '../database/read-queries';
import { PlayerBanEntity } from './entities/player-ban.entity';
import { PlayerEntity } from './entities/player.entity';
import { activeBan, activeBanPredicate } from './active-ban.rule';

export interface PlayerListFilter {
  usernamePrefix?: string;
  uuid?: string;
  uid?: string;
}

export interface PlayerListRow {
  uid: string;
  username: string;
  display_name: string;
  uuid: string | null;
  banstate: number;
  created_at: Date;
  ban_id: string | null;
  ban_reason: string | null;
  ban_until: Date | null;
  ban_created_at: Date | null;
  server_id: number | null;
  server_name: string | null;
}

export interface ActiveBanRow {
  id: string;
  uid: string;
  username: string;
  reason: string;
  message: string;
  until: Date | null;
  created_at: Date;
}

/** A player as the public API shows one (identity only). */
export interface PublicPlayerRow {
  uid: string;
  username: string;
  display_name: string;
  uuid: string | null;
}

const PUBLIC_PLAYER = 'SELECT p.uid, p.username, p.display_name, p.uuid FROM player p';
const UNBANNED = `NOT ${activeBanPredicate('p')}`;
/** The player $1, unless under an active ban. */
const PUBLIC_PLAYER_BY_UID_SQL = `${PUBLIC_PLAYER} WHERE p.uid = $1 AND ${UNBANNED}`;
/** The uids of $1 (bigint[]) under an active ban. */
const BANNED_AMONG_SQL = `SELECT x.uid::text AS uid FROM unnest($1::bigint[]) AS x(uid) WHERE ${activeBanPredicate('x')}`;
/** The player of Mojang uuid $1, unless under an active ban. */
const PUBLIC_PLAYER_BY_UUID_SQL = `${PUBLIC_PLAYER} WHERE p.uuid = $1 AND ${UNBANNED}`;
/**
 * Unbanned players whose lowercased name lies in [$1, $2) in byte order (PlayerReadService
 * publicPlayersByName gives the bounds of a prefix or of one exact name): one range of
 * IDX_player_username_lower (lower(username) text_pattern_ops), in its order, then uid; at most $3.
 * No LIKE: what the caller typed is never a pattern.
 */
const PUBLIC_PLAYERS_BY_NAME_SQL = `${PUBLIC_PLAYER}
 WHERE lower(p.username) ~>=~ $1 AND lower(p.username) ~<~ $2 AND ${UNBANNED}
 ORDER BY lower(p.username) USING ~<~, p.uid
 LIMIT $3`;

/** `_` and `%` are LIKE wildcards; usernames may hold `_`. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The admin reads of players and bans. The online server comes from the live player session (open,
 * token not expired: the rule of the live-session metric) and its open server session: read-only
 * SQL on the auth and server modules' tables, so that a page is one statement.
 */
@Injectable()
export class PlayerReadRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** The public API's lookups: on the read replica within its lag bound (ReadQueries). */
    private readonly replica: ReadQueries,
  ) {}

  /** The public API's player by uid or Mojang uuid; null when unknown or under an active ban. */
  async publicPlayer(by: { uid: string } | { uuid: string }): Promise<PublicPlayerRow | null> {
    const rows =
      'uid' in by
        ? await this.replica.run<PublicPlayerRow>('player_public_by_uid', PUBLIC_PLAYER_BY_UID_SQL, [by.uid])
        : await this.replica.run<PublicPlayerRow>('player_public_by_uuid', PUBLIC_PLAYER_BY_UUID_SQL, [by.uuid]);
    return rows[0] ?? null;
  }

  /** The players among `uids` under an active ban now (the public API's archived boards). */
  async bannedAmong(uids: readonly string[]): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = await this.replica.run<{ uid: string }>('player_public_banned_among', BANNED_AMONG_SQL, [uids]);
    return rows.map((row) => row.uid);
  }

  /** Unbanned players whose lowercased name is in [from, to) in byte order, by that name then uid; at most `limit`. */
  publicPlayersByName(from: string, to: string, limit: number): Promise<PublicPlayerRow[]> {
    return this.replica.run<PublicPlayerRow>('player_public_by_name', PUBLIC_PLAYERS_BY_NAME_SQL, [from, to, limit]);
  }

  /** Players by uid ascending after `afterUid`, at most `limit` rows. */
  listPlayers(filter: PlayerListFilter, afterUid: string | undefined, limit: number): Promise<PlayerListRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.usernamePrefix !== undefined)
      where.push(`lower(p.username) LIKE lower(${param(likePrefix(filter.usernamePrefix))}) ESCAPE '\\'`);
    if (filter.uuid !== undefined) where.push(`p.uuid = ${param(filter.uuid)}`);
    if (filter.uid !== undefined) where.push(`p.uid = ${param(filter.uid)}`);
    if (afterUid !== undefined) where.push(`p.uid > ${param(afterUid)}`);
    const limitParam = param(limit);
    return this.dataSource.query<PlayerListRow[]>(
      `SELECT p.uid, p.username, p.display_name, p.uuid, p.banstate, p.created_at,
              b.id AS ban_id, b.reason AS ban_reason, b.until AS ban_until, b.created_at AS ban_created_at,
              gs.id AS server_id, gs.name AS server_name
         FROM player p
         LEFT JOIN player_ban b ON b.uid = p.uid AND ${activeBan('b')}
         LEFT JOIN player_session ps ON ps.uid = p.uid AND ps.logged_out_at IS NULL AND ps.token_expires_at > now()
         LEFT JOIN server_session ss ON ss.id = ps.server_session_id AND ss.ended_at IS NULL
         LEFT JOIN game_server gs ON gs.id = ss.server_id
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY p.uid ASC
        LIMIT ${limitParam}`,
      params,
    );
  }

  /** Active bans by id descending (newest first) before `beforeId`. */
  listActiveBans(uid: string | undefined, beforeId: string | undefined, limit: number): Promise<ActiveBanRow[]> {
    const where = [activeBan('b')];
    const params: unknown[] = [limit];
    if (uid !== undefined) {
      params.push(uid);
      where.push(`b.uid = $${params.length}`);
    }
    if (beforeId !== undefined) {
      params.push(beforeId);
      where.push(`b.id < $${params.length}`);
    }
    return this.dataSource.query<ActiveBanRow[]>(
      `SELECT b.id, b.uid, p.username, b.reason, b.message, b.until, b.created_at
         FROM player_ban b JOIN player p ON p.uid = b.uid
        WHERE ${where.join(' AND ')}
        ORDER BY b.id DESC
        LIMIT $1`,
      params,
    );
  }

  findPlayer(uid: string): Promise<PlayerEntity | null> {
    return this.dataSource.getRepository(PlayerEntity).findOne({ where: { uid } });
  }

  /** Every ban of the player, newest first. */
  listBans(uid: string): Promise<PlayerBanEntity[]> {
    return this.dataSource.getRepository(PlayerBanEntity).find({ where: { uid }, order: { id: 'DESC' } });
  }
}

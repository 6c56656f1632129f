import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors/app-error';
import { ListQuery, Page, toPage } from '../common/pagination/list-query';
import { shownName } from '../common/player-name';
import { formatLocalDateTime } from '../common/time';
import { AdminBanResponse, AdminPlayerAccount, AdminPlayerSummary } from './dto/admin-player-read.dto';
import { ActiveBanRow, PlayerListRow, PlayerReadRepository, PublicPlayerRow } from './player-read.repository';
import { banIsActive } from './active-ban.rule';

/** A player the public API may show (known, not under an active ban): identity only. */
export interface PublicPlayer {
  uid: number;
  username: string;
  displayName: string;
  uuid: string | null;
}

const toPublicPlayer = (row: PublicPlayerRow): PublicPlayer => ({
  uid: Number(row.uid),
  username: row.username,
  displayName: shownName(row.display_name, row.username),
  uuid: row.uuid,
});

/** What a name lookup may contain: the characters of a username. Anything else finds nobody, and is refused before. */
export const PLAYER_NAME_QUERY = /^[A-Za-z0-9_]{1,32}$/;

export interface PlayerListFilters {
  username: string;
  uuid: string;
  uid: string;
}

export const PLAYER_LIST = 'players';
export const BAN_LIST = 'bans';

const localOrNull = (date: Date | null) => (date ? formatLocalDateTime(date) : null);

function toPlayerSummary(row: PlayerListRow): AdminPlayerSummary {
  return {
    uid: Number(row.uid),
    username: row.username,
    displayName: shownName(row.display_name, row.username),
    uuid: row.uuid,
    banstate: row.banstate,
    ban:
      row.ban_id === null || row.ban_created_at === null
        ? null
        : {
            banId: Number(row.ban_id),
            reason: row.ban_reason ?? '',
            until: localOrNull(row.ban_until),
            createdAt: formatLocalDateTime(row.ban_created_at),
          },
    online: row.server_id === null ? null : { serverID: row.server_id, serverName: row.server_name ?? '' },
    createdAt: formatLocalDateTime(row.created_at),
  };
}

function toBan(row: ActiveBanRow): AdminBanResponse {
  return {
    banId: Number(row.id),
    uid: Number(row.uid),
    username: row.username,
    reason: row.reason,
    message: row.message,
    until: localOrNull(row.until),
    createdAt: formatLocalDateTime(row.created_at),
  };
}

/** The admin reads of the player module (the player list, active bans, one player's account) and the public API's player lookups. */
@Injectable()
export class PlayerReadService {
  constructor(private readonly reads: PlayerReadRepository) {}

  async listPlayers(query: ListQuery<PlayerListFilters>): Promise<Page<AdminPlayerSummary>> {
    const { username, uuid, uid } = query.filters;
    const rows = await this.reads.listPlayers(
      { usernamePrefix: username, uuid: uuid?.toLowerCase(), uid },
      query.after,
      query.limit + 1,
    );
    return toPage(rows, query, PLAYER_LIST, (row) => row.uid, toPlayerSummary);
  }

  async listActiveBans(query: ListQuery<{ uid: string }>): Promise<Page<AdminBanResponse>> {
    const rows = await this.reads.listActiveBans(query.filters.uid, query.after, query.limit + 1);
    return toPage(rows, query, BAN_LIST, (row) => row.id, toBan);
  }

  /** The player by uid or Mojang uuid (lowercase), for the public API; null when unknown or under an active ban. */
  async publicPlayer(by: { uid: string } | { uuid: string }): Promise<PublicPlayer | null> {
    const row = await this.reads.publicPlayer(by);
    return row && toPublicPlayer(row);
  }

  /** The players among `uids` under an active ban now. */
  bannedAmong(uids: readonly string[]): Promise<string[]> {
    return this.reads.bannedAmong(uids);
  }

  /**
   * Unbanned players by name, ignoring case: the one name (`exact`), or every name starting with
   * it; by lowercased name, then uid; at most `limit`. `name` matches PLAYER_NAME_QUERY (ASCII), so
   * its lowercase is a plain byte string and the bounds a byte-order range: a prefix p runs to p
   * with its last byte + 1; an exact name n to n + U+0001 (text holds no NUL).
   */
  async publicPlayersByName(name: string, exact: boolean, limit: number): Promise<PublicPlayer[]> {
    if (!PLAYER_NAME_QUERY.test(name)) return [];
    const from = name.toLowerCase();
    const to = exact
      ? `${from}\u0001`
      : `${from.slice(0, -1)}${String.fromCharCode(from.charCodeAt(from.length - 1) + 1)}`;
    return (await this.reads.publicPlayersByName(from, to, limit)).map(toPublicPlayer);
  }

  /** Identity, options and ban history; 404 for an unknown uid. */
  async account(uid: string): Promise<AdminPlayerAccount> {
    const player = await this.reads.findPlayer(uid);
    if (!player) throw new NotFoundError(`No player with uid ${uid}`);
    const bans = await this.reads.listBans(uid);
    const now = Date.now();
    return {
      uid: Number(player.uid),
      username: player.username,
      displayName: shownName(player.displayName, player.username),
      uuid: player.uuid,
      banstate: player.banstate,
      dataVersion: player.dataVersion,
      createdAt: formatLocalDateTime(player.createdAt),
      updatedAt: formatLocalDateTime(player.updatedAt),
      options: {
        continueEnabled: player.continueEnabled,
        sound: player.sound,
        songSelectionState: player.songSelectionState,
        extraOptions: player.extraOptions,
        prefixKey: player.prefixKey,
        suffixKey: player.suffixKey,
      },
      bans: bans.map((ban) => ({
        banId: Number(ban.id),
        reason: ban.reason,
        message: ban.message,
        until: localOrNull(ban.until),
        createdAt: formatLocalDateTime(ban.createdAt),
        liftedAt: localOrNull(ban.liftedAt),
        active: banIsActive(ban, now),
      })),
    };
  }
}

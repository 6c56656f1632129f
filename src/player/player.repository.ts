import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { BatchableStatement, StatementBatcher } from '../database/statement-batcher';
import { DataSource, EntityManager, IsNull, QueryDeepPartialEntity } from 'typeorm';
import { PlayerBanEntity } from './entities/player-ban.entity';
import { PlayerEntity } from './entities/player.entity';
import { activeBan } from './active-ban.rule';
import type { ProfileFields } from './dto/player-profile.mapper';
import type { LoginHomeGroup } from '../server/server.service';
import type { HomeGroup } from '../server/server.types';

/** What rhythmc_player_login (sql/rhythmc_player_login.sql) is given. */
export interface OneRoundTripLogin {
  mode: 'ONLINE' | 'TOKEN' | 'OFFLINE_REFRESH';
  /** TOKEN: the uid the Net Token named. */
  uid: string | null;
  /** ONLINE: the account's uuid and the provider's spelling of its name. */
  uuid: string | null;
  username: string | null;
  /** OFFLINE_REFRESH: SHA-256 of the presented resume token. */
  resumeHash: string | null;
  serverSessionId: string;
  tokenHash: string;
  tokenExpiresAt: Date;
  version: number;
  /** Stored only when the player has continueEnabled on. */
  newResumeHash: string;
  resumeExpiresAt: Date;
  now: Date;
  /** The login server's group for the home-server rule, and the setting (JSON) it was computed from. */
  home: LoginHomeGroup;
}

/*
 * rhythmc_player_login's row (RETURNS TABLE in sql/rhythmc_player_login.sql), by status: the
 * columns each status fills, the others null. The one place its untyped row meets a type.
 */
interface LoginOkRow {
  status: 'ok';
  uid: string;
  /** After this login (the provider's spelling for ONLINE); the other profile fields are from before it. */
  username: string;
  display_name: string;
  previous_version: number;
  banstate: number;
  continue_enabled: boolean;
  sound: Record<string, unknown> | null;
  song_selection_state: Record<string, unknown> | null;
  extra_options: Record<string, unknown> | null;
  prefix_key: string | null;
  suffix_key: string | null;
  collections: string[] | null;
  /** A resume token was issued (continueEnabled on). */
  resume_issued: boolean;
}
interface LoginLiveRow {
  status: 'live';
  uid: string;
}
interface LoginBannedRow {
  status: 'banned';
  ban_reason: string | null;
  ban_until: Date | null;
}
interface LoginRefusedRow {
  /** `server_session_ended`: the login's server session ended before the login got it (nothing written). */
  status: 'no_resume' | 'no_continue' | 'unknown_player' | 'vanished' | 'server_session_ended';
}
/** The session-handover setting `home` was computed from is no longer in force: nothing was written. */
interface LoginSettingChangedRow {
  status: 'setting_changed';
}
type PlayerLoginRow = LoginOkRow | LoginLiveRow | LoginBannedRow | LoginRefusedRow | LoginSettingChangedRow;

/**
 * What the one-round-trip login answered: `ok` (the session is open; `player` as before this
 * login but for its username), `live` (a live session exists: nothing was written, the
 * transactional path decides), `setting_changed` (nothing written: compute the login server's
 * group again and call again), or why the login is refused.
 */
export type OneRoundTripLoginResult =
  | { status: 'ok'; player: ProfileFields; previousVersion: number; resumeIssued: boolean; collections: string[] }
  | { status: 'live'; uid: string }
  | { status: 'banned'; reason: string; until: Date | null }
  | { status: LoginRefusedRow['status'] | LoginSettingChangedRow['status'] };

/** rhythmc_player_login's row as the service reads it. */
function toLoginResult(row: PlayerLoginRow): OneRoundTripLoginResult {
  switch (row.status) {
    case 'ok':
      return {
        status: 'ok',
        player: {
          uid: row.uid,
          username: row.username,
          displayName: row.display_name,
          banstate: row.banstate,
          continueEnabled: row.continue_enabled,
          sound: row.sound,
          songSelectionState: row.song_selection_state,
          extraOptions: row.extra_options ?? {},
          prefixKey: row.prefix_key,
          suffixKey: row.suffix_key,
        },
        previousVersion: row.previous_version,
        resumeIssued: row.resume_issued,
        collections: row.collections ?? [],
      };
    case 'live':
      return { status: 'live', uid: row.uid };
    case 'banned':
      return { status: 'banned', reason: row.ban_reason ?? '', until: row.ban_until };
    default:
      return { status: row.status };
  }
}

/**
 * `rhythmc_player_login`, alone or for many logins in one statement (StatementBatcher), in
 * arrival order: the player a login locks is found inside the function (by uuid, resume token or
 * uid), so there is no lock order to sort by; logins of one player in two batches at once can
 * deadlock, and then run again one by one.
 */
const PLAYER_LOGIN: BatchableStatement<OneRoundTripLogin, PlayerLoginRow> = {
  name: 'player_login',
  single: 'SELECT * FROM rhythmc_player_login($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)',
  params: (login) => [
    login.mode,
    login.uid,
    login.uuid,
    login.username,
    login.resumeHash,
    login.serverSessionId,
    login.tokenHash,
    login.tokenExpiresAt,
    login.version,
    login.newResumeHash,
    login.resumeExpiresAt,
    login.now,
    login.home.servers,
    login.home.inGroup,
    login.home.setting,
  ],
  batch: `SELECT a.i, r.*
    FROM unnest($1::varchar[], $2::bigint[], $3::uuid[], $4::varchar[], $5::bpchar[], $6::uuid[], $7::bpchar[],
                $8::timestamptz[], $9::integer[], $10::bpchar[], $11::timestamptz[], $12::timestamptz[],
                $13::text[], $14::boolean[], $15::jsonb[])
         WITH ORDINALITY AS a(mode, uid, uuid, username, resume_hash, server_session_id, token_hash,
                              token_expires_at, version, new_resume_hash, resume_expires_at, now,
                              group_servers, in_group, handover, i)
   CROSS JOIN LATERAL rhythmc_player_login(a.mode, a.uid, a.uuid, a.username, a.resume_hash, a.server_session_id,
         a.token_hash, a.token_expires_at, a.version, a.new_resume_hash, a.resume_expires_at, a.now,
         ARRAY(SELECT s.v::integer FROM jsonb_array_elements_text(a.group_servers::jsonb) AS s(v)), a.in_group,
         a.handover) r
   ORDER BY a.i`,
};

@Injectable()
export class PlayerRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly batcher: StatementBatcher,
  ) {}

  private players(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(PlayerEntity);
  }

  private bans(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(PlayerBanEntity);
  }

  findByUid(uid: string, manager?: EntityManager): Promise<PlayerEntity | null> {
    return this.players(manager).findOne({ where: { uid } });
  }

  /** Locks the player row for the rest of the transaction (serialises logins of one account). */
  lockByUid(uid: string, manager: EntityManager): Promise<PlayerEntity | null> {
    return this.players(manager)
      .createQueryBuilder('p')
      .where('p.uid = :uid', { uid })
      .setLock('pessimistic_write')
      .getOne();
  }

  /**
   * The rating row's lock, taken before the player row's by a login that may move the player's
   * home server: the upload's order (rating row, then player row), so that moving the home's copies
   * (moveHome) cannot deadlock with an upload of the same player.
   */
  async lockRatingFirst(uid: string, manager: EntityManager): Promise<void> {
    await manager.query('SELECT 1 FROM player_rating WHERE uid = $1 FOR UPDATE', [uid]);
  }

  /**
   * Makes `serverId` the player's home server when its scope is another than the home's (docs/
   * decisions.md "Scoped boards: groups and countries"; `group`: its group under the setting in
   * force): rhythmc_player_move_home (player/sql/), the rule the one-round-trip login calls too.
   * The caller holds the player row.
   */
  async moveHome(uid: string, serverId: number, group: HomeGroup, manager: EntityManager): Promise<void> {
    await manager.query('SELECT rhythmc_player_move_home($1, $2, $3, $4)', [
      uid,
      serverId,
      group.servers,
      group.inGroup,
    ]);
  }

  async create(
    player: Pick<PlayerEntity, 'username' | 'uuid' | 'displayName'>,
    manager?: EntityManager,
  ): Promise<PlayerEntity> {
    const repo = this.players(manager);
    return repo.save(repo.create({ ...player, extraOptions: {} }));
  }

  async update(
    uid: string,
    changes: Partial<Omit<PlayerEntity, 'uid' | 'createdAt' | 'updatedAt'>>,
    manager?: EntityManager,
  ): Promise<void> {
    // jsonb columns typed as records do not satisfy TypeORM's deep-partial type; the shape is the entity's.
    await this.players(manager).update({ uid }, changes as QueryDeepPartialEntity<PlayerEntity>);
  }

  /**
   * A player login in one round trip: identify (ONLINE, OFFLINE_REFRESH), lock the player, ban,
   * live session, open the session, store the version, issue the resume token, read the profile and
   * the unlocked keys — the statements of PlayerLoginService's transactional path, in one function.
   */
  async loginInOneRoundTrip(login: OneRoundTripLogin): Promise<OneRoundTripLoginResult> {
    return toLoginResult(await this.batcher.run(PLAYER_LOGIN, login));
  }

  findActiveBan(uid: string, manager?: EntityManager): Promise<PlayerBanEntity | null> {
    return this.bans(manager)
      .createQueryBuilder('b')
      .where(`b.uid = :uid AND ${activeBan('b')}`, { uid })
      .getOne();
  }

  /** Lifts the player's unlifted ban (active or already run out); returns whether there was one. */
  async liftBan(uid: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.bans(manager).update({ uid, liftedAt: IsNull() }, { liftedAt: new Date() });
    return (result.affected ?? 0) > 0;
  }

  async insertBan(
    ban: Pick<PlayerBanEntity, 'uid' | 'reason' | 'message' | 'until'>,
    manager: EntityManager,
  ): Promise<PlayerBanEntity> {
    const repo = this.bans(manager);
    return repo.save(repo.create({ ...ban, liftedAt: null }));
  }
}

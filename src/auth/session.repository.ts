import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { BatchableStatement, compareUids, StatementBatcher } from '../database/statement-batcher';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { PlayerLoginMode, PlayerLogoutReason, PlayerSessionEntity } from './entities/player-session.entity';
import { PlayerSessionTakeoverEntity } from './entities/player-session-takeover.entity';
import { ServerSessionEndReason, ServerSessionEntity } from './entities/server-session.entity';

export interface NewServerSession {
  serverId: number;
  tokenHash: string;
  tokenExpiresAt: Date;
  pluginVersion: number;
  pluginSha: string;
  clientIp: string | null;
}

export interface NewPlayerSession {
  uid: string;
  serverSessionId: string;
  tokenHash: string;
  tokenExpiresAt: Date;
  mode: PlayerLoginMode;
  proven: boolean;
}

/** A takeover to record (PlayerSessionTakeoverEntity). */
export interface NewTakeover {
  uid: string;
  fromSessionId: string;
  fromServerId: number;
  toSessionId: string;
  toServerId: number;
  proof: PlayerLoginMode;
}

/** A player session named by its id and its player's uid. */
export interface SessionOfPlayer {
  id: string;
  uid: string;
}

/**
 * The open session `id` of player `uid`. The uid is redundant for the row but not for the plan:
 * with statistics taken while no session was open (every server restarted, autovacuum behind),
 * PostgreSQL costs the partial index of open sessions (uid) like the primary key and, given only
 * the id, walks every open session to find one (seen with 20,000 open). With the uid both indexes
 * are a lookup of one entry, whatever the statistics say.
 */
const openSession = ({ id, uid }: SessionOfPlayer) => ({ id, uid, loggedOutAt: IsNull() });

/**
 * A resume_session renewal: the token's hash, the uid it must belong to, the server session to bind
 * it to, and the server it may be moved from when it is bound to another one (null: none).
 */
export interface SessionRenewal {
  tokenHash: string;
  uid: string;
  serverSessionId: string;
  now: Date;
  expiresAt: Date;
  moveFrom: number | null;
}

/** `rhythmc_renew_player_session`, alone or for many renewals in one statement (StatementBatcher), by uid. */
const RENEW_PLAYER_SESSION: BatchableStatement<
  SessionRenewal,
  { uid: string | null; live: boolean | null; renewed: boolean | null; bound_server_id: number | null }
> = {
  name: 'session_renew_by_token',
  single: 'SELECT * FROM rhythmc_renew_player_session($1, $2, $3, $4, $5, $6)',
  params: (r) => [r.tokenHash, r.uid, r.serverSessionId, r.now, r.expiresAt, r.moveFrom],
  batch: `SELECT a.i, r.*
    FROM unnest($1::bpchar[], $2::bigint[], $3::uuid[], $4::timestamptz[], $5::timestamptz[], $6::integer[])
         WITH ORDINALITY AS a(token_hash, uid, server_session_id, now, expires_at, move_from, i)
   CROSS JOIN LATERAL rhythmc_renew_player_session(a.token_hash, a.uid, a.server_session_id, a.now, a.expires_at,
         a.move_from) r
   ORDER BY a.i`,
  order: (a, b) => compareUids(a.uid, b.uid),
};

export type ServerSessionLookup = Pick<ServerSessionEntity, 'id' | 'serverId' | 'tokenExpiresAt' | 'endedAt'>;

export interface PlayerSessionListRow {
  id: string;
  mode: string;
  proven: boolean;
  created_at: Date;
  renewed_at: Date;
  token_expires_at: Date;
  logged_out_at: Date | null;
  logout_reason: string | null;
  server_session_ended_at: Date | null;
  server_id: number | null;
  server_name: string | null;
}

export interface PlayerTakeoverListRow {
  taken_at: Date;
  proof: string;
  from_server_id: number;
  from_server_name: string | null;
  to_server_id: number;
  to_server_name: string | null;
}

/** Server sessions and the player sessions bound to them. */
@Injectable()
export class SessionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly batcher: StatementBatcher,
  ) {}

  private serverSessions(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ServerSessionEntity);
  }

  private playerSessions(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(PlayerSessionEntity);
  }

  /**
   * The guard's lookup on every protected call: one indexed SELECT of the four columns it needs.
   * Raw SQL on purpose: TypeORM's findOne cost ~13 % of a cheap request's CPU (docs/benchmarks-archive.md
   * "Economy: baltop").
   */
  async findServerSessionByTokenHash(tokenHash: string): Promise<ServerSessionLookup | null> {
    const rows: Array<{ id: string; server_id: number; token_expires_at: Date; ended_at: Date | null }> =
      await this.dataSource.query(
        'SELECT id, server_id, token_expires_at, ended_at FROM server_session WHERE token_hash = $1',
        [tokenHash],
      );
    const row = rows[0];
    return row
      ? { id: row.id, serverId: row.server_id, tokenExpiresAt: row.token_expires_at, endedAt: row.ended_at }
      : null;
  }

  /**
   * Which of these server sessions are over: ended, or gone (retention purges ended sessions), with
   * the reason when the row is still there. The realtime ping round's check of its open sockets.
   */
  async findEndedServerSessions(
    sessionIds: string[],
  ): Promise<Array<{ id: string; reason: ServerSessionEndReason | null }>> {
    if (sessionIds.length === 0) return [];
    const rows: Array<{ id: string; end_reason: ServerSessionEndReason | null }> = await this.dataSource.query(
      `SELECT wanted.id, s.end_reason
         FROM unnest($1::uuid[]) AS wanted(id)
         LEFT JOIN server_session s ON s.id = wanted.id
        WHERE s.id IS NULL OR s.ended_at IS NOT NULL`,
      [sessionIds],
    );
    return rows.map((row) => ({ id: row.id, reason: row.end_reason }));
  }

  /**
   * Live sessions (not ended / logged out, token not expired at `now`), for the metrics scrape.
   * Both counts walk the partial indexes of open sessions (`WHERE ended_at IS NULL`,
   * `WHERE logged_out_at IS NULL`), so their cost follows the open sessions, not the history.
   */
  async countLiveSessions(now: Date): Promise<{ servers: number; players: number }> {
    const rows: Array<{ servers: number; players: number }> = await this.dataSource.query(
      `SELECT (SELECT count(*) FROM server_session WHERE ended_at IS NULL AND token_expires_at > $1)::int AS servers,
              (SELECT count(*) FROM player_session WHERE logged_out_at IS NULL AND token_expires_at > $1)::int AS players`,
      [now],
    );
    return rows[0];
  }

  /** Ends every open session of the server; returns the ids of the sessions ended. */
  async endOpenServerSessions(
    serverId: number,
    reason: ServerSessionEndReason,
    manager: EntityManager,
  ): Promise<string[]> {
    const result = await this.serverSessions(manager)
      .createQueryBuilder()
      .update()
      .set({ endedAt: () => 'now()', endReason: reason })
      .where('server_id = :serverId AND ended_at IS NULL', { serverId })
      .returning(['id'])
      .execute();
    return (result.raw as Array<{ id: string }>).map((row) => row.id);
  }

  async endServerSession(sessionId: string, reason: ServerSessionEndReason, manager: EntityManager): Promise<boolean> {
    const result = await this.serverSessions(manager).update(
      { id: sessionId, endedAt: IsNull() },
      { endedAt: new Date(), endReason: reason },
    );
    return (result.affected ?? 0) > 0;
  }

  /** `SELECT … FOR SHARE` of the session if it is open (rhythmc_player_login does the same). */
  async shareOpenServerSession(sessionId: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      'SELECT 1 FROM server_session WHERE id = $1 AND ended_at IS NULL FOR SHARE',
      [sessionId],
    );
    return rows.length > 0;
  }

  async createServerSession(session: NewServerSession, manager: EntityManager): Promise<ServerSessionEntity> {
    const repo = this.serverSessions(manager);
    return repo.save(repo.create({ ...session, refreshedAt: null, endedAt: null, endReason: null }));
  }

  /**
   * Replaces the token of a live session, only if the presented token is still its current one
   * (two refreshes with the same token: one wins, the other gets 401).
   */
  async rotateServerToken(sessionId: string, currentHash: string, nextHash: string, expiresAt: Date): Promise<boolean> {
    const result = await this.serverSessions().update(
      { id: sessionId, tokenHash: currentHash, endedAt: IsNull() },
      { tokenHash: nextHash, tokenExpiresAt: expiresAt, refreshedAt: new Date() },
    );
    return (result.affected ?? 0) > 0;
  }

  /** The player's latest sessions, newest first, with their game server (read-only join of game_server for its name). */
  listPlayerSessions(uid: string, limit: number): Promise<PlayerSessionListRow[]> {
    return this.dataSource.query<PlayerSessionListRow[]>(
      `SELECT ps.id, ps.mode, ps.proven, ps.created_at, ps.renewed_at, ps.token_expires_at, ps.logged_out_at, ps.logout_reason,
              ss.ended_at AS server_session_ended_at, gs.id AS server_id, gs.name AS server_name
         FROM player_session ps
         JOIN server_session ss ON ss.id = ps.server_session_id
         LEFT JOIN game_server gs ON gs.id = ss.server_id
        WHERE ps.uid = $1
        ORDER BY ps.created_at DESC, ps.id DESC
        LIMIT $2`,
      [uid, limit],
    );
  }

  findPlayerSessionByTokenHash(tokenHash: string): Promise<PlayerSessionEntity | null> {
    return this.playerSessions().findOne({ where: { tokenHash } });
  }

  /** The player's session that is not logged out (at most one), expired or not. */
  findOpenPlayerSession(uid: string, manager?: EntityManager): Promise<PlayerSessionEntity | null> {
    return this.playerSessions(manager).findOne({ where: { uid, loggedOutAt: IsNull() } });
  }

  /** Like findOpenPlayerSession, with the game server its server session belongs to. */
  async findOpenPlayerSessionWithServer(
    uid: string,
    manager: EntityManager,
  ): Promise<{ session: PlayerSessionEntity; serverId: number } | null> {
    const session = await this.playerSessions(manager).findOne({
      where: { uid, loggedOutAt: IsNull() },
      relations: { serverSession: true },
    });
    if (!session?.serverSession) return null;
    return { session, serverId: session.serverSession.serverId };
  }

  async createPlayerSession(session: NewPlayerSession, manager: EntityManager): Promise<PlayerSessionEntity> {
    const repo = this.playerSessions(manager);
    return repo.save(repo.create({ ...session, renewedAt: new Date(), loggedOutAt: null, logoutReason: null }));
  }

  /**
   * resume_session in one round trip (`rhythmc_renew_player_session`,
   * sql/rhythmc_renew_player_session.sql), batched with the renewals that arrive with it: finds
   * the session of the token (null: none), says whether it was live at `now` and whose it is, and —
   * when it was live, is `uid`'s and the server session has not ended — moves it to that server
   * session and extends its token. A session bound to another server is moved only from
   * `moveFrom`; otherwise nothing is written and `boundServerId` names that server.
   */
  async renewPlayerSessionByToken(
    renewal: SessionRenewal,
  ): Promise<{ uid: string; live: boolean; renewed: boolean; boundServerId: number | null } | null> {
    const row = await this.batcher.run(RENEW_PLAYER_SESSION, renewal);
    return row.uid === null
      ? null
      : { uid: row.uid, live: row.live === true, renewed: row.renewed === true, boundServerId: row.bound_server_id };
  }

  /** Records a takeover inside the login's transaction (docs/decisions.md "Server switching"). */
  async recordTakeover(takeover: NewTakeover, manager: EntityManager): Promise<void> {
    await manager.getRepository(PlayerSessionTakeoverEntity).insert(takeover);
  }

  /**
   * Counts a player login answered 409 because another server held the player, in this hour's row
   * of each server concerned: the caller's ONLINE logins refused (`onlineRefusedBy`), and the
   * holder's sessions without proof that kept a login out (`keptOutBy`). Each server's rows older
   * than a week are deleted on the way (the admin list reads the last 24 hours).
   */
  async countConflict(counts: { onlineRefusedBy: number | null; keptOutBy: number | null }): Promise<void> {
    const rows: Array<[number, number, number]> = [];
    if (counts.onlineRefusedBy !== null) rows.push([counts.onlineRefusedBy, 1, 0]);
    if (counts.keptOutBy !== null) rows.push([counts.keptOutBy, 0, 1]);
    if (rows.length === 0) return;
    const servers = rows.map(([server]) => server);
    await this.dataSource.query(
      `INSERT INTO server_conflict_count (server_id, hour, online_refused, kept_out)
       SELECT s, date_trunc('hour', now()), o, k FROM unnest($1::int[], $2::int[], $3::int[]) AS c(s, o, k)
       ON CONFLICT (server_id, hour) DO UPDATE
         SET online_refused = server_conflict_count.online_refused + EXCLUDED.online_refused,
             kept_out = server_conflict_count.kept_out + EXCLUDED.kept_out`,
      [servers, rows.map(([, online]) => online), rows.map(([, , kept]) => kept)],
    );
    await this.dataSource.query(
      `DELETE FROM server_conflict_count WHERE server_id = ANY($1::int[]) AND hour < now() - interval '7 days'`,
      [servers],
    );
  }

  /** The player's latest takeovers, newest first, with the two servers' names. */
  listPlayerTakeovers(uid: string, limit: number): Promise<PlayerTakeoverListRow[]> {
    return this.dataSource.query<PlayerTakeoverListRow[]>(
      `SELECT t.taken_at, t.proof, t.from_server_id, f.name AS from_server_name, t.to_server_id, n.name AS to_server_name
         FROM player_session_takeover t
         LEFT JOIN game_server f ON f.id = t.from_server_id
         LEFT JOIN game_server n ON n.id = t.to_server_id
        WHERE t.uid = $1
        ORDER BY t.taken_at DESC, t.id DESC
        LIMIT $2`,
      [uid, limit],
    );
  }

  /**
   * An options sync: the player is alive (the token keeps its expiry). False: the session was
   * logged out, or moved to another server session (resume_session), meanwhile.
   */
  async markPlayerSessionRenewed(
    session: SessionOfPlayer & { serverSessionId: string },
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.playerSessions(manager).update(
      { ...openSession(session), serverSessionId: session.serverSessionId },
      { renewedAt: new Date() },
    );
    return (result.affected ?? 0) > 0;
  }

  async logoutPlayerSession(
    session: SessionOfPlayer,
    reason: PlayerLogoutReason,
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.playerSessions(manager).update(openSession(session), {
      loggedOutAt: new Date(),
      logoutReason: reason,
    });
    return (result.affected ?? 0) > 0;
  }

  /** Logs out every open session of the player; returns the server sessions they were bound to. */
  async logoutPlayer(uid: string, reason: PlayerLogoutReason, manager: EntityManager): Promise<string[]> {
    const result = await this.playerSessions(manager)
      .createQueryBuilder()
      .update()
      .set({ loggedOutAt: () => 'now()', logoutReason: reason })
      .where('uid = :uid AND logged_out_at IS NULL', { uid })
      .returning(['serverSessionId'])
      .execute();
    return (result.raw as Array<{ server_session_id: string }>).map((row) => row.server_session_id);
  }

  /**
   * Logs out every player bound to the given server sessions (they ended). The rows are locked in
   * uid order, the order of the batched renewals and syncs (StatementBatcher), so a server's end
   * and a batch that renews several of its players cannot deadlock.
   */
  async logoutPlayersOfServerSessions(serverSessionIds: string[], manager: EntityManager): Promise<number> {
    if (serverSessionIds.length === 0) return 0;
    const result = await this.playerSessions(manager)
      .createQueryBuilder()
      .update()
      .set({ loggedOutAt: new Date(), logoutReason: 'server_session_ended' })
      .where(
        `id IN (SELECT id FROM player_session
                 WHERE server_session_id = ANY(:ids::uuid[]) AND logged_out_at IS NULL
                 ORDER BY uid FOR UPDATE)`,
        { ids: serverSessionIds },
      )
      .execute();
    return result.affected ?? 0;
  }
}

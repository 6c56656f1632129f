import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { GameServerEntity } from './entities/game-server.entity';
import { ServiceSettingEntity } from './entities/service-setting.entity';

export interface ServerListRow {
  id: number;
  name: string;
  country: string;
  ip: string | null;
  created_at: Date;
  online: boolean;
  players_online: number;
  plugin_version: number | null;
  client_ip: string | null;
  last_login: Date | null;
  instance_id: string | null;
  connected_at: Date | null;
  taken_over: number;
  online_refused: number;
  kept_out: number;
}

/** Seconds after which a WebSocket row its instance stopped refreshing no longer counts (the realtime module's rule). */
const CONNECTION_STALE_SECONDS = 90;

export type SettingKey = 'maintenance' | 'plugin_policy' | 'session_handover';

@Injectable()
export class ServerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private servers(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(GameServerEntity);
  }

  private settings(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ServiceSettingEntity);
  }

  async createServer(
    server: Pick<GameServerEntity, 'name' | 'country' | 'ip'>,
    manager: EntityManager,
  ): Promise<GameServerEntity> {
    const repo = this.servers(manager);
    return repo.save(repo.create(server));
  }

  findServerById(id: number, manager?: EntityManager): Promise<GameServerEntity | null> {
    return this.servers(manager).findOne({ where: { id } });
  }

  /** The ids among `ids` that name a registered server. */
  async existingServerIds(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.servers().find({ select: { id: true }, where: { id: In(ids) } });
    return rows.map((row) => row.id);
  }

  /**
   * Registered servers by id after `afterId`, with their latest login (server_session), live players
   * (player_session) and open WebSocket (ws_connection): read-only SQL on the auth and realtime
   * tables, one statement per page.
   */
  listServers(afterId: number | undefined, online: boolean | undefined, limit: number): Promise<ServerListRow[]> {
    const params: unknown[] = [limit, CONNECTION_STALE_SECONDS];
    const where: string[] = [];
    if (afterId !== undefined) {
      params.push(afterId);
      where.push(`gs.id > $${params.length}`);
    }
    if (online !== undefined) where.push(online ? 'live.id IS NOT NULL' : 'live.id IS NULL');
    return this.dataSource.query<ServerListRow[]>(
      `SELECT gs.id, gs.name, gs.country, gs.ip, gs.created_at,
              live.id IS NOT NULL AS online,
              (SELECT count(*)::int FROM player_session ps
                WHERE live.id IS NOT NULL AND ps.server_session_id = live.id AND ps.logged_out_at IS NULL AND ps.token_expires_at > now()) AS players_online,
              latest.plugin_version, latest.client_ip, latest.created_at AS last_login,
              ws.instance_id, ws.connected_at,
              (SELECT count(*)::int FROM player_session_takeover t
                WHERE t.from_server_id = gs.id AND t.taken_at > now() - interval '24 hours') AS taken_over,
              coalesce(conflicts.online_refused, 0)::int AS online_refused, coalesce(conflicts.kept_out, 0)::int AS kept_out
         FROM game_server gs
         LEFT JOIN LATERAL (SELECT s.plugin_version, s.client_ip, s.created_at FROM server_session s
                             WHERE s.server_id = gs.id ORDER BY s.created_at DESC LIMIT 1) latest ON true
         LEFT JOIN server_session live ON live.server_id = gs.id AND live.ended_at IS NULL AND live.token_expires_at > now()
         LEFT JOIN LATERAL (SELECT w.instance_id, w.connected_at FROM ws_connection w
                             WHERE w.server_id = gs.id AND w.closed_at IS NULL AND w.last_seen_at > now() - make_interval(secs => $2)
                             ORDER BY w.connected_at DESC LIMIT 1) ws ON true
         LEFT JOIN LATERAL (SELECT sum(c.online_refused) AS online_refused, sum(c.kept_out) AS kept_out
                              FROM server_conflict_count c
                             WHERE c.server_id = gs.id AND c.hour > now() - interval '24 hours') conflicts ON true
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY gs.id ASC
        LIMIT $1`,
      params,
    );
  }

  async getSetting<T>(key: SettingKey, manager?: EntityManager): Promise<T | null> {
    const row = await this.settings(manager).findOne({ where: { key } });
    return row ? (row.value as T) : null;
  }

  async putSetting<T extends object>(key: SettingKey, value: T): Promise<void> {
    await this.settings().upsert({ key, value, updatedAt: new Date() }, ['key']);
  }
}

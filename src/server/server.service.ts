import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CredentialService } from '../auth/credential.service';
import { ServerSessionService } from '../auth/server-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import {
  BadRequestError,
  MaintenanceError,
  NotFoundError,
  UnauthorizedError,
  UpgradeRequiredError,
} from '../common/errors/app-error';
import { isUniqueViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { CreatedServerResponse, CreateServerDto } from './dto/create-server.dto';
import { ServerLoginDto } from './dto/server-login.dto';
import { ServerSessionResponse, ServerTokenResponse } from './dto/server-session.response';
import { MaintenanceDto, PluginPolicyDto, SessionHandoverDto } from './dto/settings.dto';
import { ServerListRow, ServerRepository } from './server.repository';
import { AdminServerLogoutResponse, AdminServerPage, AdminServerResponse } from './dto/admin-server-read.dto';
import { BootstrapTokenResponse } from './dto/bootstrap-token.response';
import { ListQuery, toPage } from '../common/pagination/list-query';
import { formatLocalDateTime } from '../common/time';

export const SERVER_LIST = 'servers';

function toAdminServer(row: ServerListRow): AdminServerResponse {
  return {
    serverID: row.id,
    serverName: row.name,
    country: row.country,
    ip: row.ip,
    online: row.online,
    playersOnline: row.players_online,
    pluginVersion: row.plugin_version,
    address: row.client_ip,
    lastLogin: row.last_login ? formatLocalDateTime(row.last_login) : null,
    realtime:
      row.instance_id === null
        ? null
        : { instanceId: row.instance_id, connectedAt: formatLocalDateTime(row.connected_at as Date) },
    sessionConflicts24h: { takenOver: row.taken_over, onlineRefused: row.online_refused, keptOut: row.kept_out },
    createdAt: formatLocalDateTime(row.created_at),
  };
}
import {
  DEFAULT_MAINTENANCE,
  DEFAULT_SESSION_HANDOVER,
  HANDOVER_LOGIN_MODES,
  MaintenanceSetting,
  chatAudience,
  groupServers,
  HomeGroup,
  homeGroup,
  inOneNetwork,
  mayHandOver,
  PluginPolicy,
  SessionHandoverSetting,
} from './server.types';

/** A login server's group for the home-server rule, and the stored setting (JSON) it was computed from. */
export interface LoginHomeGroup extends HomeGroup {
  setting: string;
}

@Injectable()
export class ServerService {
  /**
   * The stored session-handover setting as the one-round-trip login last read it. Never trusted
   * alone: the login's statement compares it with the setting in force and answers
   * `setting_changed` (nothing written) when another instance changed it, and the login reads it
   * again (loginHomeGroup with `fresh`). So no event has to reach every instance.
   */
  private storedHandover: { value: SessionHandoverSetting | null } | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly servers: ServerRepository,
    private readonly credentials: CredentialService,
    private readonly sessions: ServerSessionService,
    private readonly tx: TransactionService,
  ) {}

  /** POST /server/login (interface.md; decisions.md §3). */
  async login(
    { serverId, credentialHash }: { serverId: number; credentialHash: string },
    body: ServerLoginDto,
    clientIp: string | null,
  ): Promise<ServerSessionResponse> {
    const maintenance = await this.getMaintenance();
    if (maintenance.enabled) {
      throw new MaintenanceError(maintenance.message || 'The network is under maintenance');
    }
    await this.checkPluginPolicy(body);

    const { server, opened } = await this.tx.run(async (manager) => {
      const server = await this.servers.findServerById(serverId, manager);
      if (!server) throw new UnauthorizedError('Invalid bootstrap token');
      const opened = await this.sessions.openServerSession(
        serverId,
        credentialHash,
        { pluginVersion: body.pluginVersion, pluginSha: body.pluginSHA, clientIp },
        manager,
      );
      return { server, opened };
    });
    await this.sessions.announceEndedSessions(serverId, opened.replacedSessionIds, 'replaced');

    return {
      serverID: server.id,
      serverName: server.name,
      assetServer: this.config.assetServerUrl,
      serverIP: server.ip ?? clientIp ?? '',
      country: server.country,
      wsServer: this.config.wsServerUrl,
      accessToken: opened.accessToken,
      expiresIn: opened.expiresIn,
    };
  }

  refresh(session: ServerSessionContext): Promise<ServerTokenResponse> {
    return this.sessions.refreshServerSession(session);
  }

  async logout(session: ServerSessionContext): Promise<void> {
    const ended = await this.tx.run((manager) => this.sessions.endServerSession(session, 'logout', manager));
    if (ended) await this.sessions.announceEndedSessions(session.serverId, [session.sessionId], 'logout');
  }

  /**
   * POST /admin/servers/{serverID}/logout: ends the server's open session as its own logout would
   * (its players logged out, its WebSocket closed with 4002 on every instance). The plugin's next
   * call is 401 and it logs in again with its bootstrap token: rotate that first to keep it out.
   */
  async adminLogout(serverId: number): Promise<AdminServerLogoutResponse> {
    const ended = await this.tx.run(async (manager) => {
      if (!(await this.servers.findServerById(serverId, manager)))
        throw new NotFoundError(`No server with serverID ${serverId}`);
      return this.sessions.endOpenServerSessions(serverId, 'admin', manager);
    });
    await this.sessions.announceEndedSessions(serverId, ended, 'admin');
    return { serverID: serverId, endedSessions: ended.length };
  }

  async register(body: CreateServerDto): Promise<CreatedServerResponse> {
    try {
      return await this.tx.run(async (manager) => {
        const server = await this.servers.createServer(
          { name: body.name, country: body.country, ip: body.ip ?? null },
          manager,
        );
        const bootstrapToken = await this.credentials.issueBootstrapToken(server.id, manager);
        return { serverID: server.id, serverName: server.name, bootstrapToken };
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw BadRequestError.field('name', `a server named "${body.name}" already exists`, 'label');
      throw error;
    }
  }

  /** POST /admin/servers/{serverID}/bootstrap-token: a new bootstrap token; the old one stops working, live sessions stay. */
  async rotateBootstrapToken(serverId: number): Promise<BootstrapTokenResponse> {
    return { bootstrapToken: await this.credentials.issueBootstrapToken(serverId) };
  }

  /** GET /admin/servers. */
  async listServers(query: ListQuery<{ online: boolean }>): Promise<AdminServerPage> {
    const after = query.after === undefined ? undefined : Number(query.after);
    const rows = await this.servers.listServers(after, query.filters.online, query.limit + 1);
    return toPage(rows, query, SERVER_LIST, (row) => String(row.id), toAdminServer);
  }

  /** The registered name of a server (the WebSocket layer decorates chat with it). */
  async serverName(serverId: number): Promise<string> {
    return (await this.servers.findServerById(serverId))?.name ?? '';
  }

  async getMaintenance(): Promise<MaintenanceSetting> {
    return (await this.servers.getSetting<MaintenanceSetting>('maintenance')) ?? DEFAULT_MAINTENANCE;
  }

  /** The plugin policy in force; null when none was ever set (every plugin may log in). */
  getPluginPolicy(): Promise<PluginPolicy | null> {
    return this.servers.getSetting<PluginPolicy>('plugin_policy');
  }

  async setMaintenance(body: MaintenanceDto): Promise<MaintenanceSetting> {
    const setting: MaintenanceSetting = { enabled: body.enabled, message: body.message ?? '' };
    await this.servers.putSetting('maintenance', setting);
    return setting;
  }

  async setPluginPolicy(body: PluginPolicyDto): Promise<PluginPolicy> {
    if (body.latestPluginVersion < body.minPluginVersion) {
      throw BadRequestError.field('latestPluginVersion', 'must not be below minPluginVersion');
    }
    const policy: PluginPolicy = {
      minPluginVersion: body.minPluginVersion,
      latestPluginVersion: body.latestPluginVersion,
      allowedPluginSHAs: [...new Set(body.allowedPluginSHAs)],
      downUrl: body.downUrl,
    };
    await this.servers.putSetting('plugin_policy', policy);
    return policy;
  }

  /** PUT /admin/session-handover: checks the groups (known servers, each in one group) and stores the setting. */
  async setSessionHandover(body: SessionHandoverDto): Promise<SessionHandoverSetting> {
    const groups = (body.groups ?? []).map((group) => ({ name: group.name, serverIDs: [...new Set(group.serverIDs)] }));
    if (body.mode === 'groups' && groups.length === 0)
      throw BadRequestError.field('groups', 'at least one group is needed with mode groups', 'label');
    if (body.mode !== 'groups' && groups.length > 0)
      throw BadRequestError.field('groups', `only with mode groups (mode is ${body.mode})`, 'label');
    const names = groups.map((group) => group.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined) throw BadRequestError.field('groups', `the name ${twice} is used twice`, 'label');
    const owner = new Map<number, string>();
    for (const group of groups) {
      if (group.serverIDs.length < 2)
        throw BadRequestError.field('groups', `${group.name} needs at least two different servers`, 'label');
      for (const id of group.serverIDs) {
        const other = owner.get(id);
        if (other !== undefined)
          throw BadRequestError.field('groups', `server ${id} is in ${other} and in ${group.name}`, 'label');
        owner.set(id, group.name);
      }
    }
    const known = new Set(await this.servers.existingServerIds([...owner.keys()]));
    const unknown = [...owner.keys()].filter((id) => !known.has(id));
    if (unknown.length > 0) throw BadRequestError.field('groups', `no server with id ${unknown.join(', ')}`, 'label');
    const modes = body.modes ? HANDOVER_LOGIN_MODES.filter((mode) => body.modes?.includes(mode)) : HANDOVER_LOGIN_MODES;
    const setting: SessionHandoverSetting = { mode: body.mode, groups, modes };
    await this.servers.putSetting('session_handover', setting);
    this.storedHandover = null;
    return setting;
  }

  /** The session handover setting in force (GET /admin/overview shows it to the console's form). */
  async getSessionHandover(): Promise<SessionHandoverSetting> {
    return (await this.servers.getSetting<SessionHandoverSetting>('session_handover')) ?? DEFAULT_SESSION_HANDOVER;
  }

  /**
   * Whether a player login through server `to` may take over the player's live session on server
   * `from` (docs/decisions.md "Server switching"). Read inside the caller's transaction (the
   * embedded database has one connection).
   */
  async mayHandOver(from: number, to: number, mode: string, manager: EntityManager): Promise<boolean> {
    return mayHandOver(await this.sessionHandover(manager), from, to, mode);
  }

  /** Whether two servers are one network (`resume_session` may move a session between them). */
  async inOneNetwork(a: number, b: number): Promise<boolean> {
    return inOneNetwork(await this.sessionHandover(), a, b);
  }

  /** The servers of the handover group named `name` (none: no such group); the scoped boards' group. */
  async groupServers(name: string): Promise<number[]> {
    return groupServers(await this.sessionHandover(), name);
  }

  /**
   * The login server's group for the home-server rule, inside the caller's transaction (the
   * transactional login: the setting in force at the login).
   */
  async homeGroup(serverId: number, manager: EntityManager): Promise<HomeGroup> {
    return homeGroup(await this.sessionHandover(manager), serverId);
  }

  /**
   * The login server's group for the one-round-trip login, from the setting this instance last
   * read (`fresh`: read it again), with that setting's JSON for the statement to check against the
   * one in force (docs/decisions.md "Scoped boards: groups and countries").
   */
  async loginHomeGroup(serverId: number, fresh = false): Promise<LoginHomeGroup> {
    let stored = this.storedHandover;
    if (fresh || !stored) {
      stored = { value: await this.servers.getSetting<SessionHandoverSetting>('session_handover') };
      this.storedHandover = stored;
    }
    return {
      ...homeGroup(stored.value ?? DEFAULT_SESSION_HANDOVER, serverId),
      setting: JSON.stringify(stored.value),
    };
  }

  /** The servers a chat line from this server reaches; null: every server. */
  async chatAudience(serverId: number): Promise<number[] | null> {
    return chatAudience(await this.sessionHandover(), serverId);
  }

  private async sessionHandover(manager?: EntityManager): Promise<SessionHandoverSetting> {
    return (
      (await this.servers.getSetting<SessionHandoverSetting>('session_handover', manager)) ?? DEFAULT_SESSION_HANDOVER
    );
  }

  /** 426 when the version is below the minimum or the SHA is not allowed; no policy accepts everything. */
  private async checkPluginPolicy(body: ServerLoginDto): Promise<void> {
    const policy = await this.getPluginPolicy();
    if (!policy) return;
    if (body.pluginVersion < policy.minPluginVersion) {
      throw new UpgradeRequiredError(
        `Plugin version ${body.pluginVersion} is below the minimum ${policy.minPluginVersion}`,
        policy.latestPluginVersion,
        policy.downUrl,
      );
    }
    if (policy.allowedPluginSHAs.length > 0 && !policy.allowedPluginSHAs.includes(body.pluginSHA)) {
      throw new UpgradeRequiredError('This plugin build is not allowed', policy.latestPluginVersion, policy.downUrl);
    }
  }
}

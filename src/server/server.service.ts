import { Inject, Injectable } from '@nestjs/common';
import { AuthService } from '../auth/auth.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { BadRequestError, MaintenanceError, UnauthorizedError, UpgradeRequiredError } from '../common/errors/app-error';
import { isUniqueViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { CreatedServerResponse, CreateServerDto } from './dto/create-server.dto';
import { ServerLoginDto } from './dto/server-login.dto';
import { ServerSessionResponse, ServerTokenResponse } from './dto/server-session.response';
import { MaintenanceDto, PluginPolicyDto } from './dto/settings.dto';
import { ServerRepository } from './server.repository';
import { DEFAULT_MAINTENANCE, MaintenanceSetting, PluginPolicy } from './server.types';

@Injectable()
export class ServerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly servers: ServerRepository,
    private readonly auth: AuthService,
    private readonly tx: TransactionService,
  ) {}

  /** POST /server/login (interface.md; decisions.md §3). */
  async login(serverId: number, body: ServerLoginDto, clientIp: string | null): Promise<ServerSessionResponse> {
    const maintenance = await this.getMaintenance();
    if (maintenance.enabled) {
      throw new MaintenanceError(maintenance.message || 'The network is under maintenance');
    }
    await this.checkPluginPolicy(body);

    const { server, opened } = await this.tx.run(async (manager) => {
      const server = await this.servers.findServerById(serverId, manager);
      if (!server) throw new UnauthorizedError('Invalid bootstrap token');
      const opened = await this.auth.openServerSession(
        serverId,
        { pluginVersion: body.pluginVersion, pluginSha: body.pluginSHA, clientIp },
        manager,
      );
      return { server, opened };
    });
    await this.auth.announceEndedSessions(serverId, opened.replacedSessionIds, 'replaced');

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
    return this.auth.refreshServerSession(session);
  }

  async logout(session: ServerSessionContext): Promise<void> {
    const ended = await this.tx.run((manager) => this.auth.endServerSession(session, 'logout', manager));
    if (ended) await this.auth.announceEndedSessions(session.serverId, [session.sessionId], 'logout');
  }

  async register(body: CreateServerDto): Promise<CreatedServerResponse> {
    try {
      return await this.tx.run(async (manager) => {
        const server = await this.servers.createServer({ name: body.name, country: body.country, ip: body.ip ?? null }, manager);
        const bootstrapToken = await this.auth.issueBootstrapToken(server.id, manager);
        return { serverID: server.id, serverName: server.name, bootstrapToken };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new BadRequestError(`name: a server named "${body.name}" already exists`);
      throw error;
    }
  }

  /** The registered name of a server (the WebSocket layer decorates chat with it). */
  async serverName(serverId: number): Promise<string> {
    return (await this.servers.findServerById(serverId))?.name ?? '';
  }

  async getMaintenance(): Promise<MaintenanceSetting> {
    return (await this.servers.getSetting<MaintenanceSetting>('maintenance')) ?? DEFAULT_MAINTENANCE;
  }

  async setMaintenance(body: MaintenanceDto): Promise<MaintenanceSetting> {
    const setting: MaintenanceSetting = { enabled: body.enabled, message: body.message ?? '' };
    await this.servers.putSetting('maintenance', setting);
    return setting;
  }

  async setPluginPolicy(body: PluginPolicyDto): Promise<PluginPolicy> {
    if (body.latestPluginVersion < body.minPluginVersion) {
      throw new BadRequestError('latestPluginVersion must not be below minPluginVersion');
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

  /** 426 when the version is below the minimum or the SHA is not allowed; no policy accepts everything. */
  private async checkPluginPolicy(body: ServerLoginDto): Promise<void> {
    const policy = await this.servers.getSetting<PluginPolicy>('plugin_policy');
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

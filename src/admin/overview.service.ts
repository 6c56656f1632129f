import { Injectable } from '@nestjs/common';
import { SessionReadService } from '../auth/session-read.service';
import { ServerService } from '../server/server.service';
import { RatingReadService } from '../upload/rating-read.service';
import { AdminOverviewResponse } from './dto/overview.dto';

/** GET /admin/overview: counts and settings from the modules that own them, each through its service. */
@Injectable()
export class OverviewService {
  constructor(
    private readonly sessions: SessionReadService,
    private readonly servers: ServerService,
    private readonly ratings: RatingReadService,
  ) {}

  async overview(): Promise<AdminOverviewResponse> {
    const live = await this.sessions.countLiveSessions();
    const uploads = await this.ratings.recentUploads();
    const maintenance = await this.servers.getMaintenance();
    const pluginPolicy = await this.servers.getPluginPolicy();
    const sessionHandover = await this.servers.getSessionHandover();
    return {
      serversOnline: live.servers,
      playersOnline: live.players,
      uploads,
      maintenance,
      pluginPolicy,
      sessionHandover,
    };
  }
}

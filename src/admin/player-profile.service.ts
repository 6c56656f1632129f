import { Injectable } from '@nestjs/common';
import { SessionReadService } from '../auth/session-read.service';
import { CatalogService } from '../catalog/catalog.service';
import { EconomyService } from '../economy/economy.service';
import { PlayerReadService } from '../player/player-read.service';
import { RatingReadService } from '../upload/rating-read.service';
import { AdminPlayerProfileResponse } from './dto/player-profile.dto';

export const PROFILE_SESSIONS = 20;
export const PROFILE_TAKEOVERS = 20;
export const PROFILE_BALANCE_HISTORY = 20;
export const PROFILE_BESTS = 200;

/**
 * The admin profile of one player, put together from the modules that own each part (player,
 * auth, economy, upload, catalog), each through its service. Reads only; the parts are read one
 * after another, not in one snapshot (a change landing in between shows in one part only).
 */
@Injectable()
export class PlayerProfileService {
  constructor(
    private readonly players: PlayerReadService,
    private readonly sessions: SessionReadService,
    private readonly economy: EconomyService,
    private readonly ratings: RatingReadService,
    private readonly catalog: CatalogService,
  ) {}

  /** `caller` (callerKey) takes its turns when the ranks are counted in SQL. */
  async profile(uid: string, caller: string): Promise<AdminPlayerProfileResponse> {
    const account = await this.players.account(uid);
    const sessions = await this.sessions.playerSessions(uid, PROFILE_SESSIONS);
    const takeovers = await this.sessions.playerTakeovers(uid, PROFILE_TAKEOVERS);
    const balance = await this.economy.adminEconomy(uid, PROFILE_BALANCE_HISTORY);
    const ratings = await this.ratings.playerRatings(uid, PROFILE_BESTS, caller);
    const collections = await this.catalog.unlockedKeys(uid);
    return {
      ...account,
      sessions,
      takeovers,
      balance,
      atp: ratings.atp,
      siteRank: ratings.siteRank,
      bests: ratings.bests.map(({ levelId, acc, rating, trackRank }) => ({ levelId, acc, rating, trackRank })),
      bestCount: ratings.bestCount,
      collections: [...collections].sort(),
    };
  }
}

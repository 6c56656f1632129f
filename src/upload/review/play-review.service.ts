import { Injectable } from '@nestjs/common';
import { BadRequestError, NotFoundError } from '../../common/errors/app-error';
import { ListQuery, toPage } from '../../common/pagination/list-query';
import { formatLocalDateTime } from '../../common/time';
import { PlayDetailResponse, PlayPage, PlayResponse } from '../dto/play-review.dto';
import { PeriodRecountRepository } from './period-recount.repository';
import { RatingRecomputeService } from '../recompute/rating-recompute.service';
import { recordCounts } from '../counted-record.rule';
import { PlayReviewRepository } from './play-review.repository';
import type { ReviewedPlay, ReviewFilters, ReviewStanding } from './play-review.types';

export const PLAYS_LIST = 'plays';

const standing = (play: ReviewedPlay): ReviewStanding =>
  play.voided ? 'voided' : play.approved ? 'approved' : play.flags.length > 0 ? 'flagged' : 'none';

export function toPlayResponse(play: ReviewedPlay): PlayResponse {
  return {
    id: Number(play.id),
    uid: Number(play.uid),
    username: play.username,
    levelId: play.levelId,
    acc: play.acc,
    pass: play.pass,
    time: play.timeMs,
    receivedAt: formatLocalDateTime(play.receivedAt),
    serverID: play.serverId,
    flags: play.flags,
    review: standing(play),
    voidReason: play.voidReason,
    counts: recordCounts(play, { placeholder: play.placeholder }),
  };
}

/**
 * The review of stored plays (docs/decisions.md "Score integrity"): the flagged queue, approve,
 * void and restore. Each action changes the play's mark and recomputes its player's bests and ATP,
 * all-time and in every open period (PeriodRecountRepository.recount), in one transaction (the rating row locked first, so a concurrent upload of the player queues
 * behind it); every rank that moves, the player's and everyone else's, follows from the index.
 */
@Injectable()
export class PlayReviewService {
  constructor(
    private readonly plays: PlayReviewRepository,
    private readonly recomputer: RatingRecomputeService,
    private readonly periods: PeriodRecountRepository,
  ) {}

  /** Newest first; `state` flagged (the review queue) unless the query names another. */
  async list(query: ListQuery<ReviewFilters>): Promise<PlayPage> {
    const { state = 'flagged', check, uid } = query.filters;
    const rows = await this.plays.list({ state, check, uid, before: query.after, limit: query.limit + 1 });
    return toPage(rows, query, PLAYS_LIST, (play) => play.id, toPlayResponse);
  }

  /** One play with its judgement counts, combo and both times: what a reviewer decides on. */
  async get(id: string): Promise<PlayDetailResponse> {
    const play = await this.existing(id);
    const detail = await this.plays.findDetail(id);
    if (!detail) throw new NotFoundError(`No play with id ${id}`);
    return { ...toPlayResponse(play), ...detail, sentAt: formatLocalDateTime(new Date(play.timeMs)) };
  }

  /** A flagged play enters bests and ranks as if it had counted when it was accepted. */
  async approve(id: string): Promise<PlayResponse> {
    const play = await this.existing(id);
    if (play.flags.length === 0) throw new BadRequestError(`Play ${id} failed no check: there is nothing to approve`);
    return this.change(play, (manager) => this.plays.approve(id, manager));
  }

  /** Any play stops counting; its player's bests and ATP are recomputed without it. */
  void(id: string, reason: string | null): Promise<PlayResponse> {
    return this.existing(id).then((play) => this.change(play, (manager) => this.plays.void(id, reason, manager)));
  }

  /** A voided play counts again (when it did before it was voided). */
  restore(id: string): Promise<PlayResponse> {
    return this.existing(id).then((play) => this.change(play, (manager) => this.plays.restore(id, manager)));
  }

  private async change(
    play: ReviewedPlay,
    mark: Parameters<RatingRecomputeService['recomputePlayers']>[1],
  ): Promise<PlayResponse> {
    const { changed } = await this.recomputer.recomputePlayers([play.uid], async (manager) => {
      await mark?.(manager);
      await this.periods.recount([play.uid], play.levelId, manager);
      return this.plays.find(play.id, manager);
    });
    if (!changed) throw new NotFoundError(`No play with id ${play.id}`);
    return toPlayResponse(changed);
  }

  private async existing(id: string): Promise<ReviewedPlay> {
    const play = await this.plays.find(id);
    if (!play) throw new NotFoundError(`No play with id ${id}`);
    return play;
  }
}

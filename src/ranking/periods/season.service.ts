import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CatalogService } from '../../catalog/catalog.service';
import { Clock } from '../../common/clock';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/app-error';
import { ListQuery, Page, toPage } from '../../common/pagination/list-query';
import { formatLocalDateTime, parseLocalDateTime } from '../../common/time';
import { isLockNotAvailable, isUniqueViolation } from '../../database/pg-errors';
import { TransactionService } from '../../database/transaction.service';
import {
  ClosedSeasonResponse,
  CreateSeasonDto,
  SeasonCloseRuleDto,
  SeasonResponse,
  UpdateSeasonDto,
} from '../dto/season.dto';
import { PeriodJobService } from './period-job.service';
import { PeriodRepository } from './period.repository';
import type { PeriodRow, SeasonFields, SeasonRow } from './period-rows';

export const SEASON_LIST = 'seasons';

/** The current second: wire times carry whole seconds, so "not in the past" is judged at that precision. */
const wholeSecond = (date: Date) => new Date(Math.floor(date.getTime() / 1_000) * 1_000);

const stateOf = (row: PeriodRow, now: Date): SeasonResponse['state'] =>
  row.archived_at !== null
    ? 'archived'
    : row.closed_at !== null
      ? 'closed'
      : row.starts_at.getTime() > now.getTime()
        ? 'scheduled'
        : 'open';

const toSeasonResponse = (row: PeriodRow, now: Date): SeasonResponse => ({
  id: Number(row.id),
  slug: row.slug ?? '',
  name: row.name ?? '',
  startsAt: formatLocalDateTime(row.starts_at),
  endsAt: formatLocalDateTime(row.ends_at),
  closeRule:
    row.grant_collection === null || row.grant_top === null
      ? null
      : { collection: row.grant_collection, top: row.grant_top, board: 'atp' },
  state: stateOf(row, now),
  closedAt: row.closed_at ? formatLocalDateTime(row.closed_at) : null,
  createdAt: formatLocalDateTime(row.created_at),
});

/** A local date-time the DTO has already checked. */
const parsed = (text: string) => parseLocalDateTime(text) as Date;

/**
 * Seasons for staff (docs/decisions.md "Seasons: staff and the close rule"): create, list, read,
 * change while open, close early, delete before the start. Times are judged against the service's
 * Clock, the one the periods count plays with. Seasons may overlap: a play counts for every open one.
 */
@Injectable()
export class SeasonService {
  constructor(
    private readonly periods: PeriodRepository,
    private readonly job: PeriodJobService,
    private readonly catalog: CatalogService,
    private readonly tx: TransactionService,
    private readonly clock: Clock,
  ) {}

  async list(query: ListQuery<Record<string, never>>): Promise<Page<SeasonResponse>> {
    const now = this.clock.now();
    const rows = await this.periods.listSeasons(query.after, query.limit + 1);
    return toPage(
      rows,
      query,
      SEASON_LIST,
      (row) => String(row.id),
      (row) => toSeasonResponse(row, now),
    );
  }

  async get(id: string): Promise<SeasonResponse> {
    const row = await this.periods.byId(id);
    if (!row || row.kind !== 'season') throw new NotFoundError(`No season with id ${id}`);
    return toSeasonResponse(row, this.clock.now());
  }

  async create(body: CreateSeasonDto): Promise<SeasonResponse> {
    const now = this.clock.now();
    const fields: SeasonFields = {
      name: body.name,
      startsAt: parsed(body.startsAt),
      endsAt: parsed(body.endsAt),
      ...this.closeRuleFields(body.closeRule ?? null),
    };
    if (fields.startsAt.getTime() < wholeSecond(now).getTime())
      throw BadRequestError.field(
        'startsAt',
        'must not be in the past (plays made before a season exists are not counted for it)',
      );
    this.checkEnd(fields, now);
    try {
      const row = await this.tx.run(async (manager) => {
        await this.checkCollection(fields, manager);
        return this.periods.insertSeason({ ...fields, slug: body.slug }, manager);
      });
      return toSeasonResponse(row, now);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`A season with slug ${body.slug} exists`);
      throw error;
    }
  }

  async update(id: string, body: UpdateSeasonDto): Promise<SeasonResponse> {
    const now = this.clock.now();
    const row = await this.tx.run(async (manager) => {
      const season = await this.periods.lockSeason(id, manager);
      if (!season) throw new NotFoundError(`No season with id ${id}`);
      if (season.closed_at !== null) throw new ConflictError(`Season ${season.slug} is closed`);
      if (season.ends_at.getTime() <= now.getTime())
        throw new ConflictError(`Season ${season.slug} has ended (its close is due)`);
      const fields: SeasonFields = {
        name: body.name ?? season.name,
        startsAt: season.starts_at,
        endsAt: body.endsAt === undefined ? season.ends_at : parsed(body.endsAt),
        ...(body.closeRule === undefined
          ? { grantCollection: season.grant_collection, grantTop: season.grant_top }
          : this.closeRuleFields(body.closeRule)),
      };
      if (body.startsAt !== undefined) {
        if (season.starts_at.getTime() <= now.getTime())
          throw new ConflictError(`Season ${season.slug} has started: its start cannot change`);
        fields.startsAt = parsed(body.startsAt);
        if (fields.startsAt.getTime() < wholeSecond(now).getTime())
          throw BadRequestError.field('startsAt', 'must not be in the past');
      }
      this.checkEnd(fields, now);
      if (body.closeRule) await this.checkCollection(fields, manager);
      return this.periods.updateSeason(id, fields, manager);
    });
    return toSeasonResponse(row, now);
  }

  /**
   * Closes an open season now: its end moves to now in a short transaction under the exclusive
   * period lock (uploads wait for that one only), then the season is frozen as the period job
   * freezes a period that ended: its archive and its close rule's grant, one transaction that
   * uploads do not wait for (nothing writes into a closed period). The answer is the season's row
   * after the freeze, with whom the grant reached (stored on the row, so the answer is the same
   * when another instance's period job froze it between the two transactions). Should the freeze
   * fail, the error is answered and the season stays closed: the period job archives it at its
   * next run.
   */
  async close(id: string): Promise<ClosedSeasonResponse> {
    let now = this.clock.now();
    await this.tx.run(async (manager) => {
      await this.periods.lockPeriodWrites(manager);
      // The end is read once no upload can count any more: a play counted while this waited for
      // the lock is before it.
      now = this.clock.now();
      const season = await this.lockedUnderPeriodLock(id, manager);
      if (!season) throw new NotFoundError(`No season with id ${id}`);
      if (season.closed_at !== null) throw new ConflictError(`Season ${season.slug} is closed already`);
      if (season.starts_at.getTime() > now.getTime())
        throw new ConflictError(`Season ${season.slug} has not started: delete it instead`);
      if (!(await this.periods.closeSeasonEarly(id, now, manager)))
        throw new ConflictError(`Season ${season.slug} is closed already`);
    });
    const frozen = await this.job.archive(id);
    const row = frozen?.row ?? (await this.periods.byId(id, { primary: true }));
    if (!row) throw new NotFoundError(`No season with id ${id}`);
    return {
      season: toSeasonResponse(row, now),
      granted:
        row.grant_collection !== null && row.granted_uids !== null
          ? { collection: row.grant_collection, uids: row.granted_uids.map(Number) }
          : null,
    };
  }

  /** Deletes a season that has not started (no play can have counted for it). */
  async remove(id: string): Promise<void> {
    await this.tx.run(async (manager) => {
      await this.periods.lockPeriodWrites(manager);
      const now = this.clock.now();
      const season = await this.lockedUnderPeriodLock(id, manager);
      if (!season) throw new NotFoundError(`No season with id ${id}`);
      if (!(await this.periods.deleteUnstartedSeason(id, now, manager)))
        throw new ConflictError(`Season ${season.slug} has started: close it instead`);
    });
  }

  /**
   * The season's row, locked, for a caller that holds the exclusive period lock (which every
   * upload waits for): never waited for. An archive holds the row for its whole length (tens of
   * seconds at 1M players), so a second close or a delete of a season being archived would hold
   * every upload that long; it is 409 instead.
   */
  private async lockedUnderPeriodLock(id: string, manager: EntityManager): Promise<SeasonRow | null> {
    try {
      return await this.periods.lockSeason(id, manager, false);
    } catch (error) {
      if (isLockNotAvailable(error))
        throw new ConflictError(`Season ${id} is being closed or archived; try again once it is archived`);
      throw error;
    }
  }

  private closeRuleFields(rule: SeasonCloseRuleDto | null): Pick<SeasonFields, 'grantCollection' | 'grantTop'> {
    return rule ? { grantCollection: rule.collection, grantTop: rule.top } : { grantCollection: null, grantTop: null };
  }

  private checkEnd(fields: SeasonFields, now: Date): void {
    if (fields.endsAt.getTime() <= fields.startsAt.getTime())
      throw BadRequestError.field('endsAt', 'must be after startsAt');
    if (fields.endsAt.getTime() <= now.getTime()) throw BadRequestError.field('endsAt', 'must be in the future');
  }

  private async checkCollection(fields: SeasonFields, manager: EntityManager): Promise<void> {
    if (fields.grantCollection !== null && !(await this.catalog.collectionExists(fields.grantCollection, manager)))
      throw BadRequestError.field(
        'closeRule.collection',
        `no collection ${fields.grantCollection} in the catalog`,
        'label',
      );
  }
}

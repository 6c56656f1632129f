import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { uploadSessionError, UploadSessionRule } from '../auth/upload-session.rule';
import type { ServerSessionContext } from '../auth/auth.types';
import { serverCallerKey } from '../auth/caller-key';
import {
  BoardUpdates,
  RankAnswerService,
  RankIndex,
  RankBansService,
  RankWrite,
  roundRating,
  toTenThousandths,
} from '../ranking';
import type { BanCheck, BestRow, IndexedPositions, PlayerRankState, RankChange, TrackPosition } from '../ranking';
import { CatalogService } from '../catalog/catalog.service';
import { Clock } from '../common/clock';
import { BadRequestError, UnauthorizedError } from '../common/errors/app-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { isForeignKeyViolation, mayHaveCommitted } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { improves } from './best.rule';
import { recordCounts } from './counted-record.rule';
import { UploadRecordDto } from './dto/upload-record.dto';
import { toUploadedPlay } from './dto/upload-record.mapper';
import { UploadResponse } from './dto/upload.response';
import { CheckContext, failedChecks, judgedNotes } from './integrity/score-checks';
import { PlayRecordRepository } from './play-record.repository';
import { atpTenThousandths, playRating } from './rating';
import { RatingRepository } from './rating.repository';
import { UploadStatsService } from './upload-stats.service';
import type { ChartRead, NewPlayRecord, StateRead, StoredRecord, UploadRefusal } from './upload.types';

const atpText = (atpE4: number) => (atpE4 / 10_000).toFixed(4);
const atpE4Of = (atp: string) => toTenThousandths(Number(atp));

interface Counted {
  state: PlayerRankState;
  change: RankChange;
}

/** The player's rating row and best on the chart before an upload (version 0, atp null: no row, or created by this upload). */
type PreviousState = Pick<StateRead, 'atp' | 'version' | 'best'>;

/** A new best written: the player's state after it, and the change for the rank index. */
function toCounted(
  uid: string,
  levelId: number,
  previous: PreviousState,
  best: Omit<BestRow, 'version'>,
  written: { version: number; atpE4: number },
): Counted {
  // version 0: the row was created by this upload (every committed row has version ≥ 1).
  const previousAtp = previous.atp === null || previous.version === 0 ? null : atpE4Of(previous.atp);
  const { version, atpE4 } = written;
  return {
    state: { uid, version, atpE4, levelId, best: { ...best, version } },
    change: {
      uid,
      ...(previousAtp === atpE4 ? {} : { site: { before: previousAtp, after: atpE4 } }),
      tracks: [{ levelId, before: previous.best, after: { acc: best.acc, firstTimeMs: best.firstTimeMs } }],
    },
  };
}

/** The state an upload that wrote no best answers from (a duplicate, an uncounted play, a play below the best). */
const toRankState = (uid: string, levelId: number, previous: PreviousState): PlayerRankState => ({
  uid,
  version: previous.version,
  atpE4: previous.atp === null ? null : atpE4Of(previous.atp),
  levelId,
  best: previous.best,
});

interface UploadOutcome {
  record: StoredRecord;
  chart: ChartRead;
  state: PlayerRankState;
  bans: BanCheck;
  staged: IndexedPositions | null;
  /** The record is new (not a resent copy). */
  inserted: boolean;
}

/** The 401 of an upload for an erased player's uid (docs/decisions.md "Erasing a player"). */
const erasedError = (uid: string) => new UnauthorizedError(`Player ${uid} was erased: nothing is stored for this uid`);

/** The 401 of a refused upload: the reason an upload statement answered, worded. */
const refusalError = (uid: string, refusal: UploadRefusal) =>
  refusal === 'erased' ? erasedError(uid) : uploadSessionError(refusal);

/**
 * The record the insert met as a duplicate was gone when read: retention purged it (an old failed
 * play, resent) between the insert's conflict, which takes no lock, and the read. Rolled back and
 * tried once more, when the insert stores it.
 */
class VanishedDuplicateError extends Error {
  constructor() {
    super('A duplicate record vanished');
  }
}

@Injectable()
export class UploadService {
  constructor(
    private readonly records: PlayRecordRepository,
    private readonly ratings: RatingRepository,
    private readonly rankBans: RankBansService,
    private readonly sessionRule: UploadSessionRule,
    private readonly catalog: CatalogService,
    private readonly index: RankIndex,
    private readonly rankAnswers: RankAnswerService,
    private readonly stats: UploadStatsService,
    private readonly tx: TransactionService,
    private readonly boards: BoardUpdates,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * POST /player/upload. Order of checks: body (400, the pipe) → server.serverID (400) → player
   * token or online session (401). The consistency checks never refuse: a play that fails one is
   * stored with its flags and counts for nothing until approved (docs/decisions.md "Score
   * integrity"). The common upload is one statement (rhythmc_upload_record: the session check, the
   * record, and for a new counted play the player's best and ATP under the lock of the player's
   * rating row). A refused session is answered from that statement's reason (401, nothing stored,
   * no second round trip). When it stores nothing for another reason (no chart row, a failed
   * note count, a record already stored), the upload runs as a transaction, uploadInTransaction.
   * The answer of a duplicate is computed from the stored record and the current state the same
   * way, so with nothing changed in between it is the same answer.
   */
  async upload(server: ServerSessionContext, body: UploadRecordDto): Promise<UploadResponse> {
    if (body.server.serverID !== server.serverId) {
      throw BadRequestError.field(
        'server.serverID',
        `${body.server.serverID} is not the server of this session`,
        'label',
      );
    }
    const started = performance.now();
    const checks: CheckContext = {
      enabled: this.config.scoreChecks,
      nowMs: Date.now(),
      maxAgeMs: this.config.scoreMaxAgeHours * 3_600_000,
      chartNotes: null,
    };
    const play = toUploadedPlay(body, server);
    const record: NewPlayRecord = { ...play, flags: failedChecks(play, checks) };
    const tokenHash = this.sessionRule.tokenHash(body.player.accessToken);
    const judged = checks.enabled.has('noteCount') ? judgedNotes(play) : null;

    const outcome = await this.index
      .runWrite([record.uid], async (write) => {
        const written = await this.records
          .uploadInOneStatement(record, tokenHash, this.sessionRule.clock(), judged, this.clock.now())
          .catch((error: unknown) => {
            // A lost answer may hide a commit: the in-process index re-reads this player. An ERROR
            // (rolled back) or a statement never sent changed nothing.
            if (mayHaveCommitted(error)) write.outcomeUnknown();
            throw error;
          });
        if (written.outcome === 'refused') throw refusalError(record.uid, written.refusal);
        if (written.outcome !== 'stored')
          return this.uploadInTransaction(record, tokenHash, checks, write).catch((error: unknown) => {
            // The stored duplicate was purged between its insert's conflict and its read: the
            // play is new again, and a second try stores it (retention deletes old failed plays).
            if (error instanceof VanishedDuplicateError)
              return this.uploadInTransaction(record, tokenHash, checks, write);
            throw error;
          });
        const stored: StoredRecord = { ...record, ...written.record, approved: false, voided: false };
        const { uid, levelId } = record;
        let counted: Counted | null = null;
        if (written.written) {
          const position: TrackPosition = { acc: stored.acc, firstTimeMs: stored.receivedMs };
          const best = { ...position, recordId: stored.id, rating: written.written.rating };
          counted = toCounted(uid, levelId, written.previous, best, written.written);
        }
        const state = counted?.state ?? toRankState(uid, levelId, written.previous);
        const staged = write.stage(counted ? [counted.change] : [], state);
        return { record: stored, chart: written.chart, state, bans: written.bans, staged, inserted: true };
      })
      .catch((error: unknown) => this.refuseErased(record.uid, error));
    if (outcome.inserted) this.stats.countFlagged(outcome.record.flags);

    const stored = performance.now();
    const { siteRank, trackRank } = await this.rankAnswers.ranks(
      outcome.state,
      outcome.bans,
      outcome.staged,
      serverCallerKey(server.serverId),
    );
    this.stats.recordPhases((stored - started) / 1_000, (performance.now() - stored) / 1_000);
    const personalBest = outcome.state.best?.recordId === outcome.record.id;
    if (personalBest && outcome.inserted) this.boards.noteBest(record.levelId, trackRank, siteRank);
    return {
      atp: (outcome.state.atpE4 ?? 0) / 10_000,
      siteRank,
      trackRank,
      playRating: recordCounts(outcome.record, outcome.chart)
        ? roundRating(playRating(outcome.chart.constant, outcome.record.acc))
        : 0,
      personalBest,
    };
  }

  /**
   * An upload that met the player's erasure half-way (its session was read before the erasure
   * committed; its insert then found no player row, 23503) is refused like one that came after.
   */
  private async refuseErased(uid: string, error: unknown): Promise<never> {
    if (isForeignKeyViolation(error) && (await this.tx.run((manager) => this.records.isErased(uid, manager))))
      throw erasedError(uid);
    throw error;
  }

  /**
   * The upload as one transaction, for what the one statement leaves: the session judged again
   * (it may have ended since; 401 rolls back, the first statement stores nothing for a session it
   * refuses), the chart (placeholder when unknown), the record (stored once, a duplicate answered
   * from the stored one), the noteCount check, and for a new counted play the player's best and
   * ATP under the lock of the player's rating row.
   */
  private uploadInTransaction(
    record: NewPlayRecord,
    tokenHash: string,
    checks: CheckContext,
    write: RankWrite,
  ): Promise<UploadOutcome> {
    return this.tx.run(async (manager): Promise<UploadOutcome> => {
      const clock = this.sessionRule.clock();
      const first = await this.records.insertRecordAndReadState(record, tokenHash, clock, manager);
      // 401 rolls back; the statement has stored nothing for a session it refuses.
      if (first.refusal !== null) throw refusalError(record.uid, first.refusal);
      let current = first.state;
      // Another upload of the player committed while this one waited for the lock: read again.
      if (first.locked && first.locked.version !== current.version)
        current = await this.records.readLockedState(record.uid, record.levelId, manager);
      const chart = current.chart ?? toChartRead(await this.catalog.ensurePlaceholderChart(record.levelId, manager));

      let stored: StoredRecord;
      let counted: Counted | null = null;
      if (first.inserted === null) {
        // A duplicate. Its insert may have waited for a concurrent upload of the same record to
        // commit, which the statement's snapshot predates: answer from a fresh read.
        const existing = await this.records.findRecord(record.uid, record.levelId, record.timeMs, manager);
        if (!existing) throw new VanishedDuplicateError();
        stored = existing;
        current = await this.records.readLockedState(record.uid, record.levelId, manager);
      } else {
        stored = { ...record, ...first.inserted, approved: false, voided: false };
        // The note count is known only now: the noteCount check runs here (rarely adds a flag).
        if (chart.notes !== null) {
          const flags = failedChecks(record, { ...checks, chartNotes: chart.notes });
          if (flags.length !== stored.flags.length) {
            stored.flags = flags;
            await this.records.setFlags(stored.id, flags, manager);
          }
        }
        if (recordCounts(stored, chart)) {
          if (!first.locked) {
            // A first counted play: create the rating row (locked); a concurrent first play may have won.
            const created = await this.ratings.createAndLockRating(record.uid, manager);
            if (created.version !== current.version)
              current = await this.records.readLockedState(record.uid, record.levelId, manager);
          }
          counted = await this.countPlay(record.uid, record.levelId, stored, chart.constant, current, manager);
          // Every open period too, a new all-time best or not (the one statement's period step).
          await this.records.countForPeriods(
            { ...stored, uid: record.uid, levelId: record.levelId },
            chart.constant,
            this.clock.now(),
            manager,
          );
        }
      }
      // A banned player's keys changed (an upload that raced its ban): every ban view must reload.
      if (counted && current.bans.selfBanned) await this.rankBans.bumpGeneration(manager);
      // A duplicate, an uncounted play or a play below the best changes nothing: the answer comes from the stored state.
      const state = counted?.state ?? toRankState(record.uid, record.levelId, current);
      const staged = write.stage(counted ? [counted.change] : [], state);
      return { record: stored, chart, state, bans: current.bans, staged, inserted: first.inserted !== null };
    });
  }

  /**
   * Counts a new counted play against the player's current state (rating row locked): a better
   * play replaces the best and ATP follows. null when the play is not better than the best.
   */
  private async countPlay(
    uid: string,
    levelId: number,
    play: StoredRecord,
    constant: number,
    current: StateRead,
    manager: EntityManager,
  ): Promise<Counted | null> {
    const position: TrackPosition = { acc: play.acc, firstTimeMs: play.receivedMs };
    if (!improves(position, current.best)) return null;
    const best: Omit<BestRow, 'version'> = { ...position, recordId: play.id, rating: playRating(constant, play.acc) };
    const atpE4 = atpTenThousandths([...current.others, best.rating]);
    const version = await this.ratings.writeBestAndRating(uid, levelId, best, atpText(atpE4), manager);
    return toCounted(uid, levelId, current, best, { version, atpE4 });
  }
}

const toChartRead = (chart: { difficultyConstant: number; placeholder: boolean; notes: number | null }): ChartRead => ({
  constant: chart.difficultyConstant,
  placeholder: chart.placeholder,
  notes: chart.notes,
});

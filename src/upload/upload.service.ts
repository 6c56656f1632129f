import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AuthService } from '../auth/auth.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { CatalogService } from '../catalog/catalog.service';
import { BadRequestError } from '../common/errors/app-error';
import { TransactionService } from '../database/transaction.service';
import { UploadRecordDto } from './dto/upload-record.dto';
import { RecomputeResponse, UploadResponse } from './dto/upload.response';
import { RankAnswerService } from './rank/rank-answer.service';
import { IndexEntries, RankIndex, RankIndexStats } from './rank/rank-index';
import { atpTenThousandths, playRating, roundRating, toTenThousandths } from './rating';
import { BanCheck, BestRow, NewPlayRecord, StateRead, StoredBest, StoredRecord, UploadRepository } from './upload.repository';
import type { IndexedPositions, PlayerRankState, RankChange, TrackPosition } from './upload.types';

/** Players per recompute transaction: short transactions, so the embedded database keeps serving. */
export const RECOMPUTE_BATCH = 500;

const atpText = (atpE4: number) => (atpE4 / 10_000).toFixed(4);
const atpE4Of = (atp: string) => toTenThousandths(Number(atp));

/** A new best when it is the first, has a higher acc, or the same acc reached earlier. */
function improves(play: TrackPosition, best: TrackPosition | null): boolean {
  return best === null || play.acc > best.acc || (play.acc === best.acc && play.firstTimeMs < best.firstTimeMs);
}

function groupByUid<T extends { uid: string }>(rows: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(row.uid);
    if (group) group.push(row);
    else groups.set(row.uid, [row]);
  }
  return groups;
}

const samePosition = (a: TrackPosition | null, b: TrackPosition | null) =>
  a === b || (a !== null && b !== null && a.acc === b.acc && a.firstTimeMs === b.firstTimeMs);

interface Counted {
  state: PlayerRankState;
  change: RankChange;
}

interface UploadOutcome {
  record: StoredRecord;
  constant: number;
  state: PlayerRankState;
  bans: BanCheck;
  staged: IndexedPositions | null;
}

@Injectable()
export class UploadService {
  constructor(
    private readonly records: UploadRepository,
    private readonly auth: AuthService,
    private readonly catalog: CatalogService,
    private readonly index: RankIndex,
    private readonly rankAnswers: RankAnswerService,
    private readonly tx: TransactionService,
  ) {}

  /**
   * POST /player/upload. Order of checks: body (400, the pipe) → server.serverID (400) → player
   * token or online session (401, judged from the transaction's first statement, which stores
   * nothing for a refused session). Then, in that one transaction: the chart (placeholder when
   * unknown), the record (stored once), and for a new counted play the player's best and ATP
   * under the lock of the player's rating row. The answer of a duplicate is computed from the stored record and the
   * current state the same way, so with nothing changed in between it is the same answer.
   */
  async upload(server: ServerSessionContext, body: UploadRecordDto): Promise<UploadResponse> {
    if (body.server.serverID !== server.serverId) {
      throw new BadRequestError(`server.serverID: ${body.server.serverID} is not the server of this session`);
    }
    const record = this.toRecord(body, server);
    const tokenHash = this.auth.playerTokenHash(body.player.accessToken);

    const outcome = await this.index.runWrite((stage) =>
      this.tx.run(async (manager): Promise<UploadOutcome> => {
        const clock = this.auth.uploadSessionClock();
        const first = await this.records.insertRecordAndReadState(record, tokenHash, clock, manager);
        // 401 rolls back; the statement has stored nothing for a session the check refuses.
        this.auth.checkUploadSession(first.session, record.uid, server, clock);
        let current = first.state;
        // Another upload of the player committed while this one waited for the lock: read again.
        if (first.locked && first.locked.version !== current.version) current = await this.records.readLockedState(record.uid, record.levelId, manager);
        const constant = current.constant ?? (await this.catalog.ensurePlaceholderChart(record.levelId, manager)).difficultyConstant;

        let stored: StoredRecord;
        let counted: Counted | null = null;
        if (first.recordId === null) {
          // A duplicate. Its insert may have waited for a concurrent upload of the same record to
          // commit, which the statement's snapshot predates: answer from a fresh read.
          const existing = await this.records.findRecord(record.uid, record.levelId, record.timeMs, manager);
          if (!existing) throw new Error('A duplicate record vanished');
          stored = existing;
          current = await this.records.readLockedState(record.uid, record.levelId, manager);
        } else {
          stored = { id: first.recordId, acc: record.acc, pass: record.pass, timeMs: record.timeMs };
          if (stored.pass) {
            if (!first.locked) {
              // A first counted play: create the rating row (locked); a concurrent first play may have won.
              const created = await this.records.createAndLockRating(record.uid, manager);
              if (created.version !== current.version) current = await this.records.readLockedState(record.uid, record.levelId, manager);
            }
            counted = await this.countPlay(record.uid, record.levelId, stored, constant, current, manager);
          }
        }
        // A banned player's keys changed (an upload that raced its ban): every ban view must reload.
        if (counted && current.bans.selfBanned) await this.records.bumpBanGeneration(manager);
        // A duplicate, a failed play or a play below the best changes nothing: the answer comes from the stored state.
        const state = counted?.state ?? this.toRankState(record.uid, record.levelId, current);
        const staged = stage(counted ? [counted.change] : [], state);
        return { record: stored, constant, state, bans: current.bans, staged };
      }),
    );

    const { siteRank, trackRank } = await this.rankAnswers.ranks(outcome.state, outcome.bans, outcome.staged);
    return {
      atp: (outcome.state.atpE4 ?? 0) / 10_000,
      siteRank,
      trackRank,
      playRating: outcome.record.pass ? roundRating(playRating(outcome.constant, outcome.record.acc)) : 0,
      personalBest: outcome.state.best?.recordId === outcome.record.id,
    };
  }

  /**
   * POST /admin/ratings/recompute: every player's bests and ATP again from the stored records and
   * the current chart constants, RECOMPUTE_BATCH players per transaction (uid order, each batch
   * locking its players' rating rows, so uploads in between stay correct).
   */
  async recompute(): Promise<RecomputeResponse> {
    const totals: RecomputeResponse = { players: 0, bests: 0, atpChanged: 0, batches: 0 };
    for (let after = '0'; ; ) {
      const uids = await this.records.nextPlayersWithRecords(after, RECOMPUTE_BATCH);
      if (uids.length === 0) break;
      const batch = await this.index.runWrite((stage) =>
        this.tx.run(async (manager) => {
          const result = await this.recomputeBatch(uids, manager);
          stage(result.changes, null);
          return result;
        }),
      );
      await this.index.syncEntries(batch.entries);
      totals.players += uids.length;
      totals.bests += batch.bests;
      totals.atpChanged += batch.atpChanged;
      totals.batches++;
      after = uids[uids.length - 1];
    }
    return totals;
  }

  /**
   * Counts a new passed play against the player's current state (rating row locked): a better play
   * replaces the best and ATP follows. null when the play is not better than the best.
   */
  private async countPlay(uid: string, levelId: number, play: StoredRecord, constant: number, current: StateRead, manager: EntityManager): Promise<Counted | null> {
    const position: TrackPosition = { acc: play.acc, firstTimeMs: play.timeMs };
    if (!improves(position, current.best)) return null;
    // version 0: the row was created by this transaction (every committed row has version ≥ 1).
    const previousAtp = current.atp === null || current.version === 0 ? null : atpE4Of(current.atp);
    const version = current.version + 1;
    const next: BestRow = { ...position, recordId: play.id, rating: playRating(constant, play.acc), version };
    const atpE4 = atpTenThousandths([...current.others, next.rating]);
    await this.records.writeBestAndRating(uid, levelId, next, atpText(atpE4), manager);
    return {
      state: { uid, version, atpE4, levelId, best: next },
      change: {
        uid,
        ...(previousAtp === atpE4 ? {} : { site: { before: previousAtp, after: atpE4 } }),
        tracks: [{ levelId, before: current.best, after: position }],
      },
    };
  }

  private toRankState(uid: string, levelId: number, current: StateRead): PlayerRankState {
    return { uid, version: current.version, atpE4: current.atp === null ? null : atpE4Of(current.atp), levelId, best: current.best };
  }

  /** One recompute batch inside its transaction: bests from the records, ratings from the current constants. */
  private async recomputeBatch(uids: string[], manager: EntityManager) {
    const ratings = await this.records.lockRatings(uids, manager);
    const computed = await this.records.computeBests(uids, manager);
    const stored = await this.records.readBests(uids, manager);

    const storedBy = groupByUid(stored);
    const computedBy = groupByUid(computed.map((best): StoredBest => ({ ...best, rating: playRating(best.constant, best.acc), version: 0 })));

    const upserts: StoredBest[] = [];
    const removed: Array<{ uid: string; levelId: number }> = [];
    const updates: Array<{ uid: string; atp: string; version: number }> = [];
    const unranked: string[] = [];
    const changes: RankChange[] = [];
    const entries: IndexEntries = { sites: [], tracks: [] };
    let atpChanged = 0;

    for (const uid of uids) {
      const rating = ratings.get(uid);
      const before = new Map((storedBy.get(uid) ?? []).map((best) => [best.levelId, best]));
      const after = computedBy.get(uid) ?? [];
      const previousAtp = rating && rating.version > 0 ? atpE4Of(rating.atp) : null;
      const atpE4 = after.length > 0 ? atpTenThousandths(after.map((best) => best.rating)) : null;
      const version = (rating?.version ?? 0) + 1;

      const changedBests = after.filter((best) => {
        const old = before.get(best.levelId);
        return !old || old.acc !== best.acc || old.firstTimeMs !== best.firstTimeMs || old.recordId !== best.recordId || old.rating !== best.rating;
      });
      const gone = [...before.values()].filter((old) => !after.some((best) => best.levelId === old.levelId));
      if (changedBests.length === 0 && gone.length === 0 && previousAtp === atpE4) continue;

      if (previousAtp !== atpE4) atpChanged++;
      for (const best of changedBests) upserts.push({ ...best, version });
      for (const old of gone) removed.push({ uid, levelId: old.levelId });
      if (atpE4 === null) unranked.push(uid);
      else {
        updates.push({ uid, atp: atpText(atpE4), version });
        entries.sites.push({ uid, version, atpE4 });
      }
      const tracks: RankChange['tracks'] = [];
      for (const best of changedBests) {
        const old = before.get(best.levelId) ?? null;
        if (!samePosition(old, best)) tracks.push({ levelId: best.levelId, before: old, after: best });
        entries.tracks.push({ uid, levelId: best.levelId, version, acc: best.acc, firstTimeMs: best.firstTimeMs });
      }
      for (const old of gone) tracks.push({ levelId: old.levelId, before: old, after: null });
      changes.push({ uid, ...(previousAtp === atpE4 ? {} : { site: { before: previousAtp, after: atpE4 } }), tracks });
    }
    // Rating rows created by lockRatings for players without any counted play go again.
    for (const uid of uids) if ((ratings.get(uid)?.version ?? 0) === 0 && !computedBy.has(uid) && !unranked.includes(uid)) unranked.push(uid);

    await this.records.replaceBests(upserts, removed, manager);
    await this.records.replaceRatings(updates, unranked, manager);
    // The ban views hold banned players' keys: if one of them changed, every view must reload.
    if ((await this.records.activelyBanned(changes.map((change) => change.uid), manager)).length > 0) await this.records.bumpBanGeneration(manager);
    return { changes, entries, bests: computed.length, atpChanged };
  }

  private toRecord(body: UploadRecordDto, server: ServerSessionContext): NewPlayRecord {
    const p = body.payload;
    return {
      uid: body.player.playerUID,
      levelId: p.levelID,
      timeMs: p.time,
      playerTimestampMs: body.player.timestamp,
      acc: p.acc,
      pass: p.pass,
      fullCombo: p.fullCombo,
      allPerfect: p.allPerfect,
      isNewRecord: p.isNewRecord,
      maxCombo: p.maxCombo,
      isRival: p.isRival,
      isWin: p.isWin,
      rivalUid: Math.max(0, p.rivalUID),
      rivalAcc: p.rivalAcc,
      counters: [
        p.tapStats.perfect,
        p.tapStats.great,
        p.tapStats.miss,
        p.holdStats.perfect,
        p.holdStats.great,
        p.holdStats.miss,
        p.dodgeStats.perfect,
        p.dodgeStats.great,
        p.dodgeStats.miss,
        p.lookStats.perfect,
        p.lookStats.great,
        p.lookStats.miss,
      ],
      playerArena: p.player_arena ?? '',
      serverId: server.serverId,
      serverName: body.server.serverName,
      serverCountry: body.server.country,
      serverSessionId: server.sessionId,
    };
  }

  /** The rank index's mode and contents, for the metrics. */
  async rankIndexStats(): Promise<RankIndexStats & { mode: RankIndex['kind'] }> {
    return { mode: this.index.kind, ...(await this.index.stats()) };
  }
}

import { toTenThousandths } from '../../ranking/rating-scale';
import type { IndexEntries, RankChange, StoredBest, TrackPosition } from '../../ranking';
import { atpTenThousandths, playRating } from '../rating';
import type { ComputedBest } from '../upload.types';

/** What one recompute batch writes, and what the rank index must learn from it. */
export interface BestsDiff {
  /** Bests to insert or replace (with the player's new version). */
  upserts: StoredBest[];
  /** Bests that no longer exist (no counted record left on the chart). */
  removed: Array<{ uid: string; levelId: number }>;
  /** Players whose ATP row is written with a new ATP and version. */
  updates: Array<{ uid: string; atp: string; version: number }>;
  /** Players without any counted record: their rating row goes. */
  unranked: string[];
  /** Before → after per changed player, for the in-process index. */
  changes: RankChange[];
  /** Committed entries with versions (removals included), for the Redis index. */
  entries: Required<IndexEntries>;
  atpChanged: number;
}

export interface BatchInput {
  uids: string[];
  /** Locked rating rows (version 0: created by the batch for a player without one). */
  ratings: Map<string, { atp: string; version: number }>;
  /** Bests computed from the counted records. */
  computed: ComputedBest[];
  /** Bests as stored. */
  stored: StoredBest[];
  /** A fresh version per player of `uids`, same order. */
  versions: number[];
}

const atpText = (atpE4: number) => (atpE4 / 10_000).toFixed(4);

const samePosition = (a: TrackPosition | null, b: TrackPosition | null) =>
  a === b || (a !== null && b !== null && a.acc === b.acc && a.firstTimeMs === b.firstTimeMs);

function groupByUid<T extends { uid: string }>(rows: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(row.uid);
    if (group) group.push(row);
    else groups.set(row.uid, [row]);
  }
  return groups;
}

/**
 * The difference between the stored bests and ATP of a batch of players and those computed from
 * their counted records (ratings at the charts' current constants). Pure: only the players whose
 * bests or ATP change appear, each with its fresh version.
 */
export function diffBests(input: BatchInput): BestsDiff {
  const storedBy = groupByUid(input.stored);
  const computedBy = groupByUid(
    input.computed.map((best): StoredBest => ({ ...best, rating: playRating(best.constant, best.acc), version: 0 })),
  );
  const diff: BestsDiff = {
    upserts: [],
    removed: [],
    updates: [],
    unranked: [],
    changes: [],
    entries: { sites: [], tracks: [], removedSites: [], removedTracks: [] },
    atpChanged: 0,
  };

  input.uids.forEach((uid, index) => {
    const rating = input.ratings.get(uid);
    const before = new Map((storedBy.get(uid) ?? []).map((best) => [best.levelId, best]));
    const after = computedBy.get(uid) ?? [];
    const previousAtp = rating && rating.version > 0 ? toTenThousandths(Number(rating.atp)) : null;
    const atpE4 = after.length > 0 ? atpTenThousandths(after.map((best) => best.rating)) : null;
    const version = input.versions[index];

    const changedBests = after.filter((best) => {
      const old = before.get(best.levelId);
      return (
        !old ||
        old.acc !== best.acc ||
        old.firstTimeMs !== best.firstTimeMs ||
        old.recordId !== best.recordId ||
        old.rating !== best.rating
      );
    });
    const gone = [...before.values()].filter((old) => !after.some((best) => best.levelId === old.levelId));
    if (changedBests.length === 0 && gone.length === 0 && previousAtp === atpE4) {
      // Nothing changed; a rating row the batch created for a player without a counted play goes again.
      if (rating?.version === 0 && atpE4 === null) diff.unranked.push(uid);
      return;
    }

    if (previousAtp !== atpE4) diff.atpChanged++;
    for (const best of changedBests) diff.upserts.push({ ...best, version });
    for (const old of gone) diff.removed.push({ uid, levelId: old.levelId });
    if (atpE4 === null) {
      diff.unranked.push(uid);
      diff.entries.removedSites.push({ uid, version });
    } else {
      diff.updates.push({ uid, atp: atpText(atpE4), version });
      diff.entries.sites.push({ uid, version, atpE4 });
    }
    const tracks: RankChange['tracks'] = [];
    for (const best of changedBests) {
      const old = before.get(best.levelId) ?? null;
      if (!samePosition(old, best)) tracks.push({ levelId: best.levelId, before: old, after: best });
      diff.entries.tracks.push({ uid, levelId: best.levelId, version, acc: best.acc, firstTimeMs: best.firstTimeMs });
    }
    for (const old of gone) {
      tracks.push({ levelId: old.levelId, before: old, after: null });
      diff.entries.removedTracks.push({ uid, levelId: old.levelId, version });
    }
    diff.changes.push({
      uid,
      ...(previousAtp === atpE4 ? {} : { site: { before: previousAtp, after: atpE4 } }),
      tracks,
    });
  });
  return diff;
}

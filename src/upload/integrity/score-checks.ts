import { SCORE_CHECK_NAMES, ScoreCheckName } from '../../config/app-config';

/** How far payload.time may be ahead of the service's clock (client clocks drift; 5 minutes covers it). */
export const MAX_AHEAD_MS = 5 * 60_000;

/**
 * Percentage points `acc` may lie outside the range its judgements allow (the `accuracy` check):
 * room for a game that rounds or truncates its figure to one decimal, and for float error.
 */
export const ACCURACY_TOLERANCE = 0.1;

/** What the checks read of a play (the upload's gameplay record). */
export interface CheckedPlay {
  acc: number;
  fullCombo: boolean;
  allPerfect: boolean;
  maxCombo: number;
  /** tap, hold, dodge, look × perfect, great, miss. */
  counters: readonly number[];
  /** payload.time, epoch ms. */
  timeMs: number;
}

export interface CheckContext {
  enabled: ReadonlySet<ScoreCheckName>;
  /** The service's clock, epoch ms. */
  nowMs: number;
  maxAgeMs: number;
  /** The chart's note count when the catalog has one (PUT /admin/charts `notes`); null: not checked. */
  chartNotes: number | null;
}

const GROUPS = 4;
const sumOf = (counters: readonly number[], offset: number) => {
  let total = 0;
  for (let group = 0; group < GROUPS; group++) total += counters[group * 3 + offset];
  return total;
};

/** The notes a play judged (perfect + great + miss over the four groups): what the noteCount check compares. */
export function judgedNotes(play: Pick<CheckedPlay, 'counters'>): number {
  return sumOf(play.counters, 0) + sumOf(play.counters, 1) + sumOf(play.counters, 2);
}

/**
 * The accuracies, in percent, that a play's judgements allow (the `accuracy` check). The contract
 * gives the counts and `acc` (0–100) but not the game's weights, so the range holds for every
 * weighting in which a perfect counts fully, a miss not at all and a great anything in between,
 * alike for every note: `acc = 100 × (perfect + w × great) / (perfect + great + miss)` over the four
 * groups, w in [0, 1]. No judged note: only 0.
 */
export function accuracyRange(perfect: number, great: number, miss: number): { min: number; max: number } {
  const judged = perfect + great + miss;
  if (judged === 0) return { min: 0, max: 0 };
  return { min: (100 * perfect) / judged, max: (100 * (perfect + great)) / judged };
}

/**
 * The consistency checks a play fails, in SCORE_CHECK_NAMES order; [] when it passes every enabled
 * one. Pure: the same play and context always give the same answer. Counters below zero never get
 * here (the upload's validation answers 400 for them).
 */
export function failedChecks(play: CheckedPlay, context: CheckContext): ScoreCheckName[] {
  const perfect = sumOf(play.counters, 0);
  const great = sumOf(play.counters, 1);
  const miss = sumOf(play.counters, 2);
  const judged = perfect + great + miss;
  const accuracy = accuracyRange(perfect, great, miss);
  const failed: Record<ScoreCheckName, boolean> = {
    // A full combo has no miss in any judgement group.
    fullCombo: play.fullCombo && miss > 0,
    // All perfect: no great and no miss.
    allPerfect: play.allPerfect && (great > 0 || miss > 0),
    // A combo cannot be longer than the notes judged.
    maxCombo: play.maxCombo > judged,
    // With a known note count, every note is judged exactly once.
    noteCount: context.chartNotes !== null && judged !== context.chartNotes,
    // 100 % accuracy with a missed note.
    perfectAccuracy: play.acc >= 100 && miss > 0,
    // acc outside what the judgements allow, by more than the tolerance.
    accuracy: play.acc < accuracy.min - ACCURACY_TOLERANCE || play.acc > accuracy.max + ACCURACY_TOLERANCE,
    // Played in the last SCORE_MAX_AGE_HOURS, and not in the future.
    time: play.timeMs > context.nowMs + MAX_AHEAD_MS || play.timeMs < context.nowMs - context.maxAgeMs,
  };
  return SCORE_CHECK_NAMES.filter((check) => failed[check] && context.enabled.has(check));
}

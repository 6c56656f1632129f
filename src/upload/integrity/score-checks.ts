import { SCORE_CHECK_NAMES, ScoreCheckName } from '../../config/app-config';

/** How far payload.time may be ahead of the service's clock (client clocks drift; 5 minutes covers it). */
export const MAX_AHEAD_MS = 5 * 60_000;

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
 * The consistency checks a play fails, in SCORE_CHECK_NAMES order; [] when it passes every enabled
 * one. Pure: the same play and context always give the same answer. Counters below zero never get
 * here (the upload's validation answers 400 for them).
 */
export function failedChecks(play: CheckedPlay, context: CheckContext): ScoreCheckName[] {
  const perfect = sumOf(play.counters, 0);
  const great = sumOf(play.counters, 1);
  const miss = sumOf(play.counters, 2);
  const judged = perfect + great + miss;
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
    // Played in the last SCORE_MAX_AGE_HOURS, and not in the future.
    time: play.timeMs > context.nowMs + MAX_AHEAD_MS || play.timeMs < context.nowMs - context.maxAgeMs,
  };
  return SCORE_CHECK_NAMES.filter((check) => failed[check] && context.enabled.has(check));
}

import { SCORE_CHECK_NAMES, ScoreCheckName } from '../../config/app-config';
import {
  accuracyRange,
  ACCURACY_TOLERANCE,
  CheckContext,
  CheckedPlay,
  failedChecks,
  MAX_AHEAD_MS,
} from './score-checks';

const NOW = Date.UTC(2026, 10, 25, 12);
const HOUR = 3_600_000;

/** 100 judged notes: 90 perfect, 8 great, 2 miss (tap group), nothing else. */
const play = (overrides: Partial<CheckedPlay> = {}): CheckedPlay => ({
  acc: 97.5,
  fullCombo: false,
  allPerfect: false,
  maxCombo: 60,
  counters: [90, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  timeMs: NOW - 60_000,
  ...overrides,
});

const context = (overrides: Partial<CheckContext> = {}): CheckContext => ({
  enabled: new Set(SCORE_CHECK_NAMES),
  nowMs: NOW,
  maxAgeMs: 24 * HOUR,
  chartNotes: null,
  ...overrides,
});

/** Counters with the judgements spread over the four groups. */
const spread = (perfect: number, great: number, miss: number) => [perfect, 0, 0, 0, great, 0, 0, 0, miss, 0, 0, 0];

describe('failedChecks', () => {
  it('passes a consistent play', () => {
    expect(failedChecks(play(), context())).toEqual([]);
  });

  it.each<[ScoreCheckName, Partial<CheckedPlay>, Partial<CheckedPlay>]>([
    ['fullCombo', { fullCombo: true, counters: spread(90, 10, 0) }, { fullCombo: true, counters: spread(90, 9, 1) }],
    [
      'allPerfect',
      { allPerfect: true, fullCombo: true, acc: 100, counters: spread(100, 0, 0) },
      { allPerfect: true, acc: 100, counters: spread(99, 1, 0) },
    ],
    ['maxCombo', { maxCombo: 100 }, { maxCombo: 101 }],
    // One miss in 2,000 notes: within the accuracy check's tolerance, so only perfectAccuracy fails.
    ['perfectAccuracy', { acc: 100, counters: spread(2000, 0, 0) }, { acc: 100, counters: spread(1999, 0, 1) }],
    // 90 perfect, 8 great, 2 miss allow 90 % to 98 %, each with the tolerance.
    ['accuracy', { acc: 90 - ACCURACY_TOLERANCE }, { acc: 89.89 }],
    ['accuracy', { acc: 98 + ACCURACY_TOLERANCE }, { acc: 98.11 }],
    [
      'accuracy',
      { acc: 0, counters: spread(0, 0, 0), maxCombo: 0 },
      { acc: 99.999, counters: spread(0, 0, 0), maxCombo: 0 },
    ],
    ['time', { timeMs: NOW + MAX_AHEAD_MS }, { timeMs: NOW + MAX_AHEAD_MS + 1 }],
    ['time', { timeMs: NOW - 24 * HOUR }, { timeMs: NOW - 24 * HOUR - 1 }],
  ])('%s: passes at the edge, fails past it', (check, passing, failing) => {
    expect(failedChecks(play(passing), context())).toEqual([]);
    expect(failedChecks(play(failing), context())).toEqual([check]);
  });

  it('allPerfect also fails on a miss (with fullCombo then failing too)', () => {
    expect(
      failedChecks(play({ allPerfect: true, fullCombo: true, acc: 99, counters: spread(99, 0, 1) }), context()),
    ).toEqual(['fullCombo', 'allPerfect']);
  });

  it('noteCount compares the judged notes with the chart note count, only when the chart has one', () => {
    expect(failedChecks(play(), context({ chartNotes: 100 }))).toEqual([]);
    expect(failedChecks(play(), context({ chartNotes: 101 }))).toEqual(['noteCount']);
    expect(failedChecks(play(), context({ chartNotes: null }))).toEqual([]);
  });

  it('reports every failed check, in the order of SCORE_CHECK_NAMES', () => {
    const cheat = play({
      acc: 100,
      fullCombo: true,
      allPerfect: true,
      maxCombo: 99_999,
      counters: spread(40, 10, 50),
      timeMs: 1,
    });
    expect(failedChecks(cheat, context({ chartNotes: 500 }))).toEqual([
      'fullCombo',
      'allPerfect',
      'maxCombo',
      'noteCount',
      'perfectAccuracy',
      'accuracy',
      'time',
    ]);
  });

  it('accuracy allows every weight of a great from nothing to a perfect, alike for every group', () => {
    expect(accuracyRange(90, 8, 2)).toEqual({ min: 90, max: 98 });
    expect(accuracyRange(100, 0, 0)).toEqual({ min: 100, max: 100 });
    expect(accuracyRange(0, 0, 7)).toEqual({ min: 0, max: 0 });
    expect(accuracyRange(0, 0, 0)).toEqual({ min: 0, max: 0 });
    // The groups add up: 30 perfect tap + 20 great hold + 50 miss look is 30 % to 50 %.
    const groups = [30, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 50];
    expect(failedChecks(play({ acc: 40, maxCombo: 30, counters: groups }), context())).toEqual([]);
    expect(failedChecks(play({ acc: 50.2, maxCombo: 30, counters: groups }), context())).toEqual(['accuracy']);
    expect(failedChecks(play({ acc: 29.8, maxCombo: 30, counters: groups }), context())).toEqual(['accuracy']);
  });

  it('runs only the enabled checks', () => {
    const cheat = play({ acc: 100, maxCombo: 99_999, timeMs: 1 });
    expect(failedChecks(cheat, context({ enabled: new Set<ScoreCheckName>(['maxCombo']) }))).toEqual(['maxCombo']);
    expect(failedChecks(cheat, context({ enabled: new Set() }))).toEqual([]);
  });
});

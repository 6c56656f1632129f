/**
 * A `gameplay` upload payload (interface.md "Upload record"): a passed play unless overridden, with
 * judgements that pass every consistency check (no miss, so acc 100 stays consistent too).
 */
export type GameplayPayload = Record<string, unknown> & { levelID: number; time: number };

export function gameplayPayload(levelID: number, time: number, overrides: Record<string, unknown> = {}): GameplayPayload {
  return {
    type: 'gameplay',
    levelID,
    acc: 99.5,
    isRival: false,
    isWin: false,
    rivalUID: 0,
    rivalAcc: 0,
    tapStats: { perfect: 311, great: 4, miss: 0 },
    holdStats: { perfect: 40, great: 2, miss: 0 },
    dodgeStats: { perfect: 12, great: 0, miss: 0 },
    lookStats: { perfect: 7, great: 1, miss: 0 },
    maxCombo: 355,
    pass: true,
    fullCombo: false,
    allPerfect: false,
    isNewRecord: false,
    player_arena: 'arena:forest',
    time,
    ...overrides,
  };
}

import type { TestClients } from '../support/test-app';

/**
 * A `gameplay` upload payload (interface.md "Upload record"): a passed play unless overridden, with
 * judgements that pass every consistency check (no miss, so acc 100 stays consistent too).
 */
export type GameplayPayload = Record<string, unknown> & { levelID: number; time: number };

export function gameplayPayload(
  levelID: number,
  time: number,
  overrides: Record<string, unknown> = {},
): GameplayPayload {
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

/** Defines active charts (constant 10 unless given) with PUT /admin/charts: plays on unknown levels are unranked. */
export async function defineCharts(app: TestClients, levelIds: number[], difficultyConstant = 10): Promise<void> {
  const response = await app.admin.put(
    '/admin/charts',
    levelIds.map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant,
      version: '1.0',
      active: true,
    })),
  );
  if (response.status !== 200) throw new Error(`defineCharts: ${response.status} ${response.text}`);
}

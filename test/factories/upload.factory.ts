import type { TestClients } from '../support/test-app';
import type { TestPlayerSession } from './player.factory';
import type { TestServerSession } from './server.factory';

/**
 * A `gameplay` upload payload (interface.md "Upload record"): a passed play unless overridden, with
 * judgements that pass every consistency check. The default play judges 377 notes (perfect 370,
 * great 7, miss 0), which allows acc 98.14 to 100; an `acc` below that without judgements of its
 * own turns as many perfects into greats as the `accuracy` check needs, starting with tap.
 */
export type GameplayPayload = Record<string, unknown> & { levelID: number; time: number };

const STAT_GROUPS = ['tapStats', 'holdStats', 'dodgeStats', 'lookStats'] as const;

function judgements(
  acc: unknown,
): Record<(typeof STAT_GROUPS)[number], { perfect: number; great: number; miss: number }> {
  const stats = {
    tapStats: { perfect: 311, great: 4, miss: 0 },
    holdStats: { perfect: 40, great: 2, miss: 0 },
    dodgeStats: { perfect: 12, great: 0, miss: 0 },
    lookStats: { perfect: 7, great: 1, miss: 0 },
  };
  if (typeof acc !== 'number' || !(acc >= 0)) return stats;
  let surplus = 370 - Math.floor((acc * 377) / 100);
  for (const group of STAT_GROUPS) {
    const moved = Math.min(Math.max(surplus, 0), stats[group].perfect);
    stats[group] = { ...stats[group], perfect: stats[group].perfect - moved, great: stats[group].great + moved };
    surplus -= moved;
  }
  return stats;
}

export function gameplayPayload(
  levelID: number,
  time: number,
  overrides: Record<string, unknown> = {},
): GameplayPayload {
  const ownJudgements = STAT_GROUPS.some((group) => group in overrides);
  return {
    type: 'gameplay',
    levelID,
    acc: 99.5,
    isRival: false,
    isWin: false,
    rivalUID: 0,
    rivalAcc: 0,
    ...judgements(ownJudgements ? undefined : overrides.acc),
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

/**
 * Uploads `payload` as `player`'s play through `server`'s session (the record the plugin sends) and
 * answers the upload's body; throws unless the answer is 200.
 */
export async function uploadPlay(
  app: TestClients,
  server: TestServerSession,
  player: TestPlayerSession,
  payload: GameplayPayload,
): Promise<Record<string, unknown>> {
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
  return response.body as Record<string, unknown>;
}

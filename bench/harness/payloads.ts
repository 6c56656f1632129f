/** Request bodies the plugin sends, shaped as interface.md describes them. */
import { CHARTS } from './generate';

export interface GameplayPlay {
  uid: number;
  accessToken: string;
  serverID: number;
  serverName?: string;
  country?: string;
  levelID: number;
  acc: number;
  pass: boolean;
  /** payload.time, epoch ms; with uid and levelID the record's identity. */
  time: number;
}

/** Notes per judgement group of a bench play. */
const GROUP_NOTES = 306;

/**
 * The judgements of one group for an accuracy, consistent with the `accuracy` check (perfects
 * at most acc, misses at most 100 − acc): all perfect at 100 %, one miss below 99.5 %.
 */
function judgementsFor(acc: number): { perfect: number; great: number; miss: number } {
  if (acc === 100) return { perfect: GROUP_NOTES, great: 0, miss: 0 };
  const miss = acc < 99.5 ? 1 : 0;
  const perfect = Math.floor((acc * GROUP_NOTES) / 100);
  return { perfect, great: GROUP_NOTES - miss - perfect, miss };
}

/**
 * A POST /player/upload record (one object, not an array), consistent with every score check
 * (docs/decisions.md "Score integrity"). `play.time` must be within the last SCORE_MAX_AGE_HOURS
 * for the play to count.
 */
export function gameplayRecord(play: GameplayPlay): Record<string, unknown> {
  const stats = judgementsFor(play.acc);
  return {
    player: { playerUID: play.uid, accessToken: play.accessToken, timestamp: play.time + 250 },
    server: { serverID: play.serverID, serverName: play.serverName ?? 'bench', country: play.country ?? 'DE' },
    payload: {
      type: 'gameplay',
      levelID: play.levelID,
      acc: play.acc,
      isRival: false,
      isWin: false,
      rivalUID: 0,
      rivalAcc: 0,
      tapStats: stats,
      holdStats: stats,
      dodgeStats: stats,
      lookStats: stats,
      maxCombo: 300,
      pass: play.pass,
      fullCombo: play.acc === 100,
      allPerfect: play.acc === 100,
      isNewRecord: false,
      player_arena: 'bench',
      time: play.time,
    },
  };
}

/**
 * A random play as the generator makes them: a chart skewed towards low level ids, 15 % at 100 %,
 * the rest between 80 and 100, 10 % failed. `random` returns [0, 1) (Math.random or a seeded one).
 */
export function randomPlay(random: () => number, charts = CHARTS): { levelID: number; acc: number; pass: boolean } {
  const acc = random() < 0.15 ? 100 : Math.round((80 + 20 * Math.sqrt(random())) * 100) / 100;
  return { levelID: 1 + Math.floor(charts * random() ** 2), acc, pass: random() > 0.1 };
}

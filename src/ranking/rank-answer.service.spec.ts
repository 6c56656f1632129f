import type { BanView } from './ban-view';
import { RankAnswerService } from './rank-answer.service';
import type { RankIndex, TrackRead } from './rank-index/rank-index';
import type { RankSourceRepository } from './rank-source.repository';
import type { BanCheck, PlayerRankState, TrackPosition } from './ranking.types';

const BANS: BanCheck = { selfBanned: false, generation: 4, dbNowMs: 1_800_000_000_000 };
const read = (levelId: number, acc: number): TrackRead => ({
  levelId,
  best: { acc, firstTimeMs: 1_700_000_000_000 + levelId, recordId: String(levelId), version: 2 },
});
const BESTS = [read(11, 99.5), read(12, 98), read(13, 97)];

/** The index answers `indexed` (null: cannot); 1 banned player ahead on chart 12; SQL counts levelId·10 unbanned ahead. */
function serviceWith(indexed: number[] | null, banView: 'ok' | 'fails' = 'ok') {
  const calls = {
    index: [] as Array<[string, readonly TrackRead[]]>,
    sql: [] as unknown[][],
    ensured: [] as number[][],
  };
  const index = {
    trackPositions: (uid: string, bests: readonly TrackRead[]) => {
      calls.index.push([uid, bests]);
      return Promise.resolve(indexed);
    },
  } as unknown as RankIndex;
  const bans = {
    ensure: (generation: number, dbNowMs: number) => {
      calls.ensured.push([generation, dbNowMs]);
      return banView === 'ok' ? Promise.resolve() : Promise.reject(new Error('ban view down'));
    },
    bannedAhead: (state: PlayerRankState) => ({ siteAhead: 0, trackAhead: state.levelId === 12 ? 1 : 0 }),
  } as unknown as BanView;
  const sources = {
    unbannedTrackAhead: (uid: string, bests: ReadonlyArray<{ levelId: number; best: TrackPosition }>) => {
      calls.sql.push([uid, bests.map(({ levelId, best }) => [levelId, best.acc])]);
      return Promise.resolve(bests.map(({ levelId }) => levelId * 10));
    },
  } as unknown as RankSourceRepository;
  return { service: new RankAnswerService(index, bans, sources), calls };
}

describe('RankAnswerService.trackRanks', () => {
  it('answers every best from one index read, less the banned players ahead, with no SQL', async () => {
    const { service, calls } = serviceWith([4, 9, 0]);
    expect(await service.trackRanks('42', BESTS, BANS, 'caller')).toEqual([5, 9, 1]);
    expect(calls.index).toEqual([['42', BESTS]]);
    expect(calls.ensured).toEqual([[4, 1_800_000_000_000]]);
    expect(calls.sql).toEqual([]);
  });

  it('counts every best in one SQL statement, in order, when the index cannot answer', async () => {
    const { service, calls } = serviceWith(null);
    expect(await service.trackRanks('42', BESTS, BANS, 'caller')).toEqual([111, 121, 131]);
    expect(calls.sql).toEqual([
      [
        '42',
        [
          [11, 99.5],
          [12, 98],
          [13, 97],
        ],
      ],
    ]);
  });

  it('counts in SQL when the ban view cannot be brought up to date', async () => {
    const { service, calls } = serviceWith([4, 9, 0], 'fails');
    expect(await service.trackRanks('42', BESTS, BANS, 'caller')).toEqual([111, 121, 131]);
    expect(calls.sql).toHaveLength(1);
  });

  it('answers no rank for a banned player and reads nothing', async () => {
    const { service, calls } = serviceWith([4, 9, 0]);
    expect(await service.trackRanks('42', BESTS, { ...BANS, selfBanned: true }, 'caller')).toEqual([null, null, null]);
    expect(calls).toEqual({ index: [], sql: [], ensured: [] });
  });
});

import { roundRating } from '../ranking';
import type { BanCheck, PlayerRankState, RankAnswerService, TrackRead } from '../ranking';
import { playRating } from './rating';
import type { ProfileRead, RatingReadRepository } from './rating-read.repository';
import { RatingReadService } from './rating-read.service';

type Ranks = Awaited<ReturnType<RankAnswerService['ranks']>>;

const BANS: BanCheck = { selfBanned: false, generation: 3, dbNowMs: 1_800_000_000_000 };

function serviceWith(read: ProfileRead) {
  const asked: PlayerRankState[] = [];
  const tracksAsked: Array<{ uid: string; bests: readonly TrackRead[]; caller: string }> = [];
  const repository = { profile: () => Promise.resolve(read) } as unknown as RatingReadRepository;
  const answers = {
    ranks: (state: PlayerRankState): Promise<Ranks> => {
      asked.push(state);
      return Promise.resolve({
        siteRank: state.atpE4 === null ? null : 7,
        trackRank: state.best === null ? null : state.levelId,
      });
    },
    trackRanks: (uid: string, bests: readonly TrackRead[], _bans: BanCheck, caller: string) => {
      tracksAsked.push({ uid, bests, caller });
      return Promise.resolve(bests.map(({ levelId }) => levelId));
    },
  } as unknown as RankAnswerService;
  return { service: new RatingReadService(repository, answers), asked, tracksAsked };
}

const best = (levelId: number, acc: number) => ({
  level_id: levelId,
  chart_name: `chart ${levelId}`,
  acc,
  rating: acc / 10,
  first_time_ms: '1700000000000',
  record_id: String(levelId * 10),
  version: '2',
});

describe('RatingReadService.playerRatings', () => {
  it('asks for the site rank once and for the track ranks of all the bests in one call', async () => {
    const { service, asked, tracksAsked } = serviceWith({
      rating: { atp: '12.3456', version: '5' },
      bans: BANS,
      bests: [best(11, 99.5), best(12, 98)],
      bestCount: 2,
      recent: [],
    });
    const summary = await service.playerRatings('42', 30, 'caller');
    expect(summary).toEqual({
      atp: 12.3456,
      siteRank: 7,
      bests: [
        { levelId: 11, chartName: 'chart 11', acc: 99.5, rating: 9.95, trackRank: 11 },
        { levelId: 12, chartName: 'chart 12', acc: 98, rating: 9.8, trackRank: 12 },
      ],
      bestCount: 2,
      recent: [],
    });
    expect(asked).toEqual([{ uid: '42', version: 5, atpE4: 123_456, levelId: 0, best: null }]);
    expect(tracksAsked).toEqual([
      {
        uid: '42',
        caller: 'caller',
        bests: [
          { levelId: 11, best: { acc: 99.5, firstTimeMs: 1_700_000_000_000, recordId: '110', version: 2 } },
          { levelId: 12, best: { acc: 98, firstTimeMs: 1_700_000_000_000, recordId: '120', version: 2 } },
        ],
      },
    ]);
  });

  it('asks for no site rank without a rating, and maps the recent plays with their time', async () => {
    const { service, asked, tracksAsked } = serviceWith({
      rating: null,
      bans: BANS,
      bests: [],
      bestCount: 0,
      recent: [
        {
          level_id: 11,
          chart_name: 'chart 11',
          difficulty_constant: 10,
          acc: 100,
          full_combo: true,
          all_perfect: false,
          max_combo: 812,
          received_ms: '1700000000123',
        },
      ],
    });
    const summary = await service.playerRatings('42', 30, 'caller', 10);
    expect(asked).toEqual([]);
    expect(tracksAsked).toEqual([{ uid: '42', caller: 'caller', bests: [] }]);
    expect(summary.atp).toBeNull();
    expect(summary.siteRank).toBeNull();
    expect(summary.recent).toEqual([
      {
        levelId: 11,
        chartName: 'chart 11',
        acc: 100,
        rating: roundRating(playRating(10, 100)),
        fullCombo: true,
        allPerfect: false,
        maxCombo: 812,
        receivedAt: new Date(1_700_000_000_123),
      },
    ]);
  });
});

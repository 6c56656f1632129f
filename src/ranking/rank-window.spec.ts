import type { RankKey } from './rank-index/rank-index';
import { readRankWindow, WINDOW_MARGIN, WindowSource } from './rank-window';

/** A board of `size` players (key [i, 0, i]) with the player at `at`, the players in `banned` banned; records the spans read. */
function board(size: number, at: number, banned: Set<number>) {
  const spans: number[] = [];
  const keys: RankKey[] = Array.from({ length: size }, (_, i) => [i, 0, i]);
  const source: WindowSource = {
    read: (span) => {
      spans.push(span);
      return Promise.resolve({
        position: at,
        ahead: keys.slice(Math.max(0, at - span), at),
        behind: keys.slice(at + 1, at + 1 + span),
      });
    },
    banned: (key) => banned.has(key[2]),
    rank: (position) => position - [...banned].filter((i) => i < position).length + 1,
  };
  return { source, spans };
}

const uids = (keys: RankKey[] | undefined) => keys?.map((key) => key[2]);

describe('readRankWindow', () => {
  it('answers the rank and the k nearest unbanned neighbours on each side from one read of k + 8', async () => {
    const { source, spans } = board(100, 50, new Set([48, 52, 53]));
    const window = await readRankWindow(source, 3);
    expect({ rank: window?.rank, ahead: uids(window?.ahead), behind: uids(window?.behind) }).toEqual({
      rank: 50,
      ahead: [46, 47, 49],
      behind: [51, 54, 55],
    });
    expect(spans).toEqual([3 + WINDOW_MARGIN]);
  });

  it('answers fewer neighbours at the top and the bottom of the board without reading again', async () => {
    const top = board(20, 0, new Set([2]));
    const first = await readRankWindow(top.source, 5);
    expect({ rank: first?.rank, ahead: uids(first?.ahead), behind: uids(first?.behind) }).toEqual({
      rank: 1,
      ahead: [],
      behind: [1, 3, 4, 5, 6],
    });
    const bottom = board(20, 19, new Set([17]));
    const last = await readRankWindow(bottom.source, 5);
    expect({ rank: last?.rank, ahead: uids(last?.ahead), behind: uids(last?.behind) }).toEqual({
      rank: 19,
      ahead: [13, 14, 15, 16, 18],
      behind: [],
    });
    const alone = board(1, 0, new Set());
    expect(await readRankWindow(alone.source, 25)).toEqual({ rank: 1, ahead: [], behind: [] });
    expect([top.spans, bottom.spans, alone.spans]).toEqual([[13], [13], [33]]);
  });

  it('reads again with twice the span when banned neighbours leave a side short, and k = 0 reads only the rank', async () => {
    // 10 banned right behind the player: 13 read, 3 unbanned; 26 read, 16 unbanned.
    const { source, spans } = board(200, 100, new Set([101, 102, 103, 104, 105, 106, 107, 108, 109, 110]));
    const window = await readRankWindow(source, 5);
    expect({ rank: window?.rank, ahead: uids(window?.ahead), behind: uids(window?.behind) }).toEqual({
      rank: 101,
      ahead: [95, 96, 97, 98, 99],
      behind: [111, 112, 113, 114, 115],
    });
    expect(spans).toEqual([13, 26]);
    const zero = board(200, 100, new Set([99, 101]));
    expect(await readRankWindow(zero.source, 0)).toEqual({ rank: 100, ahead: [], behind: [] });
  });

  it('gives up (null: SQL answers) after four reads, or when the index cannot answer', async () => {
    const banned = new Set(Array.from({ length: 150 }, (_, i) => 200 + i));
    const { source, spans } = board(1_000, 199, banned);
    expect(await readRankWindow(source, 5)).toBeNull();
    expect(spans).toEqual([13, 26, 52, 104]);
    const failing: WindowSource = { read: () => Promise.resolve(null), banned: () => false, rank: () => 1 };
    expect(await readRankWindow(failing, 5)).toBeNull();
  });
});

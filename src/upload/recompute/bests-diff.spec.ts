import type { ComputedBest } from '../upload.types';
import type { StoredBest } from '../../ranking';
import { diffBests } from './bests-diff';

const computed = (
  uid: string,
  levelId: number,
  acc: number,
  firstTimeMs: number,
  recordId: string,
  constant = 10,
): ComputedBest => ({ uid, levelId, acc, firstTimeMs, recordId, constant });
const stored = (
  uid: string,
  levelId: number,
  acc: number,
  firstTimeMs: number,
  recordId: string,
  rating: number,
  version: number,
): StoredBest => ({
  uid,
  levelId,
  acc,
  firstTimeMs,
  recordId,
  rating,
  version,
});

describe('diffBests', () => {
  it('leaves out a player whose bests and ATP are unchanged', () => {
    const diff = diffBests({
      uids: ['1'],
      ratings: new Map([['1', { atp: '0.4000', version: 5 }]]),
      computed: [computed('1', 7, 100, 1_000, '11')],
      stored: [stored('1', 7, 100, 1_000, '11', 12, 5)],
      versions: [9],
    });
    expect(diff).toEqual({
      upserts: [],
      removed: [],
      updates: [],
      unranked: [],
      changes: [],
      entries: { sites: [], tracks: [], removedSites: [], removedTracks: [] },
      atpChanged: 0,
    });
  });

  it('replaces a changed best with the fresh version and moves ATP', () => {
    const diff = diffBests({
      uids: ['1'],
      ratings: new Map([['1', { atp: '0.4000', version: 5 }]]),
      computed: [computed('1', 7, 99, 2_000, '12')],
      stored: [stored('1', 7, 100, 1_000, '11', 12, 5)],
      versions: [9],
    });
    expect(diff.upserts).toEqual([
      { uid: '1', levelId: 7, acc: 99, firstTimeMs: 2_000, recordId: '12', constant: 10, rating: 11.5, version: 9 },
    ]);
    expect(diff.updates).toEqual([{ uid: '1', atp: '0.3833', version: 9 }]);
    expect(diff.changes).toEqual([
      {
        uid: '1',
        site: { before: 4_000, after: 3_833 },
        tracks: [
          {
            levelId: 7,
            before: stored('1', 7, 100, 1_000, '11', 12, 5),
            after: expect.objectContaining({ acc: 99, firstTimeMs: 2_000 }),
          },
        ],
      },
    ]);
    expect(diff.entries).toEqual({
      sites: [{ uid: '1', version: 9, atpE4: 3_833 }],
      tracks: [{ uid: '1', levelId: 7, version: 9, acc: 99, firstTimeMs: 2_000 }],
      removedSites: [],
      removedTracks: [],
    });
    expect(diff.atpChanged).toBe(1);
  });

  it('removes the best and the rating of a player left without a counted play, as versioned removals', () => {
    const diff = diffBests({
      uids: ['1', '2'],
      ratings: new Map([
        ['1', { atp: '0.4000', version: 5 }],
        ['2', { atp: '0', version: 0 }],
      ]),
      computed: [],
      stored: [stored('1', 7, 100, 1_000, '11', 12, 5)],
      versions: [9, 10],
    });
    expect(diff.removed).toEqual([{ uid: '1', levelId: 7 }]);
    // Player 2's row was created by the batch (version 0) and goes again, with no change to announce.
    expect(diff.unranked).toEqual(['1', '2']);
    expect(diff.changes).toEqual([
      {
        uid: '1',
        site: { before: 4_000, after: null },
        tracks: [{ levelId: 7, before: stored('1', 7, 100, 1_000, '11', 12, 5), after: null }],
      },
    ]);
    expect(diff.entries).toEqual({
      sites: [],
      tracks: [],
      removedSites: [{ uid: '1', version: 9 }],
      removedTracks: [{ uid: '1', levelId: 7, version: 9 }],
    });
  });
});

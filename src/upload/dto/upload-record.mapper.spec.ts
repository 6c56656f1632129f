import type { UploadRecordDto } from './upload-record.dto';
import { toUploadedPlay } from './upload-record.mapper';

const body = (payload: Partial<UploadRecordDto['payload']> = {}): UploadRecordDto => ({
  player: { playerUID: '4242', accessToken: 'token', timestamp: 1_700_000_000_123 },
  server: { serverID: 7, serverName: 'Lobby 7', country: 'DE' },
  payload: {
    type: 'gameplay',
    levelID: 3001,
    acc: 98.5,
    isRival: true,
    isWin: false,
    rivalUID: 99,
    rivalAcc: 97.25,
    tapStats: { perfect: 1, great: 2, miss: 3 },
    holdStats: { perfect: 4, great: 5, miss: 6 },
    dodgeStats: { perfect: 7, great: 8, miss: 9 },
    lookStats: { perfect: 10, great: 11, miss: 12 },
    maxCombo: 40,
    pass: true,
    fullCombo: false,
    allPerfect: false,
    isNewRecord: true,
    player_arena: 'arena-2',
    time: 1_700_000_000_000,
    ...payload,
  },
});

describe('toUploadedPlay', () => {
  it('maps every field of the body and the server session', () => {
    expect(toUploadedPlay(body(), { serverId: 7, sessionId: '00000000-0000-4000-8000-000000000007' })).toEqual({
      uid: '4242',
      levelId: 3001,
      timeMs: 1_700_000_000_000,
      playerTimestampMs: 1_700_000_000_123,
      acc: 98.5,
      pass: true,
      fullCombo: false,
      allPerfect: false,
      isNewRecord: true,
      maxCombo: 40,
      isRival: true,
      isWin: false,
      rivalUid: 99,
      rivalAcc: 97.25,
      counters: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
      playerArena: 'arena-2',
      serverId: 7,
      serverName: 'Lobby 7',
      serverCountry: 'DE',
      serverSessionId: '00000000-0000-4000-8000-000000000007',
    });
  });

  it('stores no rival as 0 and a missing arena as the empty string', () => {
    const play = toUploadedPlay(body({ rivalUID: -1, player_arena: undefined }), { serverId: 7, sessionId: 's' });
    expect({ rivalUid: play.rivalUid, playerArena: play.playerArena }).toEqual({ rivalUid: 0, playerArena: '' });
  });
});

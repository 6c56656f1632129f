import type { ServerSessionContext } from '../../auth/auth.types';
import type { UploadedPlay } from '../upload.types';
import { UploadRecordDto } from './upload-record.dto';

/** The play of POST /player/upload as it is stored: the body's fields, and the server session it came through. */
export function toUploadedPlay(
  body: UploadRecordDto,
  server: Pick<ServerSessionContext, 'serverId' | 'sessionId'>,
): UploadedPlay {
  const p = body.payload;
  return {
    uid: body.player.playerUID,
    levelId: p.levelID,
    timeMs: p.time,
    playerTimestampMs: body.player.timestamp,
    acc: p.acc,
    pass: p.pass,
    fullCombo: p.fullCombo,
    allPerfect: p.allPerfect,
    isNewRecord: p.isNewRecord,
    maxCombo: p.maxCombo,
    isRival: p.isRival,
    isWin: p.isWin,
    rivalUid: Math.max(0, p.rivalUID),
    rivalAcc: p.rivalAcc,
    counters: [
      p.tapStats.perfect,
      p.tapStats.great,
      p.tapStats.miss,
      p.holdStats.perfect,
      p.holdStats.great,
      p.holdStats.miss,
      p.dodgeStats.perfect,
      p.dodgeStats.great,
      p.dodgeStats.miss,
      p.lookStats.perfect,
      p.lookStats.great,
      p.lookStats.miss,
    ],
    playerArena: p.player_arena ?? '',
    serverId: server.serverId,
    serverName: body.server.serverName,
    serverCountry: body.server.country,
    serverSessionId: server.sessionId,
  };
}

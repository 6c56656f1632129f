import type { EntityManager } from 'typeorm';
import type { PlayerKickedEvent } from './events';

/**
 * At most this many undelivered player frames are kept per server session; later ones are dropped
 * (a session that never reconnects). Kicks are kept whatever this count (RealtimeRepository.keepForSessions).
 */
export const OUTBOX_LIMIT_PER_SESSION = 100;

/** A frame for the game server a player is on: `{event, data}`, data carrying the player's `uid`. */
export interface PlayerFrame {
  uid: string;
  frame: { event: string; data: Record<string, unknown> };
}

/**
 * The transactional side of the realtime outbox (docs/decisions.md "Realtime"): a module that
 * changes a player's data writes the frame telling the player's game server inside its own
 * transaction, so the frame exists exactly when the change committed, whichever instance holds
 * the socket and whether Redis is up. One row per frame and live server session of the player
 * (a player session not logged out, its token not expired, on an open server session: the
 * "online" of the admin reads); an offline player gets none (its next login reads its data).
 * The realtime module delivers the rows as it delivers kept kicks: the instance holding a socket
 * of the session takes each row once, a socket that connects later takes what is left, rows
 * expire after `expiresAt`; the caller publishes `frames.kept` after the commit so delivery is
 * immediate. Here, not in realtime/, because no module depends on realtime (the bus's own rule);
 * OUTBOX_LIMIT_PER_SESSION bounds these (not kicks: a ban must reach its server).
 *
 * Returns the server sessions that were given a frame.
 */
export async function keepPlayerFrames(
  manager: EntityManager,
  frames: PlayerFrame[],
  expiresAt: Date,
): Promise<string[]> {
  if (frames.length === 0) return [];
  const rows = await manager.query<Array<{ server_session_id: string }>>(
    `INSERT INTO realtime_outbox (event_id, server_session_id, frame, expires_at)
     SELECT gen_random_uuid(), ps.server_session_id, f.frame, $3
       FROM unnest($1::bigint[], $2::jsonb[]) AS f(uid, frame)
       JOIN player_session ps ON ps.uid = f.uid AND ps.logged_out_at IS NULL AND ps.token_expires_at > now()
       JOIN server_session ss ON ss.id = ps.server_session_id AND ss.ended_at IS NULL
      WHERE (SELECT count(*) FROM realtime_outbox o
              WHERE o.server_session_id = ps.server_session_id AND o.delivered_at IS NULL) < $4
     RETURNING server_session_id`,
    [frames.map((f) => f.uid), frames.map((f) => JSON.stringify(f.frame)), expiresAt, OUTBOX_LIMIT_PER_SESSION],
  );
  return [...new Set(rows.map((row) => row.server_session_id))];
}

/** The `kick_player` frame of a kick (decisions.md §7): what every socket of its sessions receives. */
export function kickFrame(kick: Pick<PlayerKickedEvent, 'uid' | 'message' | 'reason' | 'until'>): {
  event: 'kick_player';
  data: { uid: number; message: string; reason: string; until: string };
} {
  return {
    event: 'kick_player',
    data: { uid: Number(kick.uid), message: kick.message, reason: kick.reason, until: kick.until },
  };
}

/**
 * How long a kept kick waits for a socket of its session: one server token's lifetime and its
 * refresh grace, past which the session cannot reconnect without a new login (which ends it).
 */
export function keptKickExpiry(
  config: { serverTokenTtlSeconds: number; serverTokenRefreshGraceSeconds: number },
  now = Date.now(),
): Date {
  return new Date(now + (config.serverTokenTtlSeconds + config.serverTokenRefreshGraceSeconds) * 1000);
}

/**
 * Keeps a kick's frame for each of its server sessions until a socket of the session takes it,
 * under the kick's id: the ban writes it inside its own transaction, so the kick exists exactly
 * when the ban committed (a process that stops before publishing, or Redis down, loses nothing;
 * the realtime outbox round delivers it). Every instance that hears the event writes the same rows
 * again (RealtimeRepository.keepForSessions): the first write wins, later ones change nothing.
 * Not held to OUTBOX_LIMIT_PER_SESSION: a ban must reach its game server whatever else waits there.
 */
export async function keepKick(
  manager: EntityManager,
  eventId: string,
  sessionIds: string[],
  frame: { event: string; data: Record<string, unknown> },
  expiresAt: Date,
): Promise<void> {
  if (sessionIds.length === 0) return;
  await manager.query(
    `INSERT INTO realtime_outbox (event_id, server_session_id, frame, expires_at)
     SELECT $1, s, $3, $4 FROM unnest($2::uuid[]) AS s
     ON CONFLICT (event_id, server_session_id) DO NOTHING`,
    [eventId, sessionIds, frame, expiresAt],
  );
}

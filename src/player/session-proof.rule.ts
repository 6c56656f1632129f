import type { PlayerLoginMode } from '../auth/entities/player-session.entity';

/**
 * Proof of ownership at player login (docs/decisions.md "Server switching"). ONLINE proves none:
 * the identity provider only says that the account exists (interface.md, known weakness 6), and
 * any game server can name any uuid. A Net Token proves the player typed their secret; a resume
 * token proves it only when it was issued to a session that was proven itself (a squatter's ONLINE
 * login gets a resume token too). Twin: `v_proven` of rhythmc_player_login
 * (player/sql/rhythmc_player_login.sql), the login of a player without a live session; this
 * form serves the login that meets one. test/e2e/session-takeover.e2e-spec.ts checks both.
 */
export function loginProves(mode: PlayerLoginMode, resumeTokenProven: boolean): boolean {
  return mode === 'TOKEN' || (mode === 'OFFLINE_REFRESH' && resumeTokenProven);
}

/**
 * A login takes over a live session held through another server session when it carries proof the
 * holder lacked. A session opened with proof keeps answering 409 (unless a handover applies).
 */
export function mayTakeOver(
  holder: { proven: boolean; serverSessionId: string },
  login: { proven: boolean; serverSessionId: string },
): boolean {
  return login.proven && !holder.proven && holder.serverSessionId !== login.serverSessionId;
}

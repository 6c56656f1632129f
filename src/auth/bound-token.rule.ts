import { UnauthorizedError } from '../common/errors/app-error';

/*
 * The bound player token: a player access token a game server sends for a player (collections,
 * economy and options syncs) must name a live session (not logged out, token unexpired), of that
 * uid, bound to the calling server session. Two forms:
 *   - rhythmc_bound_player_session: SQL (auth/sql/rhythmc_bound_player_session.sql), inside the
 *     collection and balance syncs' one statement (rhythmc_grant_collections, rhythmc_set_balance);
 *   - boundTokenStatus: TypeScript, over the loaded session (the options sync,
 *     PlayerSessionService.resolveBoundPlayerToken).
 * Both answer a status, and boundTokenError words its 401 for either: the SQL answer carries the
 * reason, no second read. test/e2e/twin-rules.e2e-spec.ts runs both over the same session rows.
 */

export type BoundTokenStatus = 'ok' | 'invalid_token' | 'other_uid' | 'other_server_session';

/** The stored session of the token (null: no session has it), as boundTokenStatus reads it. */
export interface BoundTokenSession {
  uid: string;
  serverSessionId: string;
  loggedOutAt: Date | null;
  tokenExpiresAt: Date;
}

/** rhythmc_bound_player_session in TypeScript, at `now` (ms since the epoch). */
export function boundTokenStatus(
  session: BoundTokenSession | null,
  uid: string,
  serverSessionId: string,
  now: number,
): BoundTokenStatus {
  if (!session || session.loggedOutAt !== null || session.tokenExpiresAt.getTime() <= now) return 'invalid_token';
  if (session.uid !== uid) return 'other_uid';
  if (session.serverSessionId !== serverSessionId) return 'other_server_session';
  return 'ok';
}

/** The 401 of a status of either form; null for 'ok'. */
export function boundTokenError(status: string): UnauthorizedError | null {
  switch (status) {
    case 'ok':
      return null;
    case 'other_uid':
      return new UnauthorizedError('The access token does not belong to this uid');
    case 'other_server_session':
      return new UnauthorizedError('The player session belongs to another server session');
    case 'invalid_token':
      return new UnauthorizedError('Invalid or expired player access token');
    default:
      throw new Error(`Unknown player token status ${status}`);
  }
}

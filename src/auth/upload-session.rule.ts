import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnauthorizedError } from '../common/errors/app-error';
import type { UploadSessionClock } from './auth.types';
import { TokenService } from './token.service';

/*
 * Which player session an upload may run under (interface.md POST /player/upload). Decided in SQL
 * only: rhythmc_upload_session_refusal (auth/sql/) answers why a session is refused, or null when
 * it is accepted, and both upload statements call it (the one statement, rhythmc_upload_record, and
 * the transactional path's first statement), so nothing is stored for a refused session and the
 * reason comes back in the same round trip. TypeScript only words the reason (uploadSessionError)
 * and takes the clock both statements judge at. test/e2e/upload-session-rule.e2e-spec.ts holds the
 * function to the expected reason row by row, around every boundary of the clock.
 *
 * The rule: the player token's session must not be logged out (logout, ban, the end of its server
 * session and the player's next login all close it) and must belong to `uid`; it must be bound to
 * the calling server session (live: its bearer token was just accepted); and its token must be
 * unexpired, or else the session renewed (login, resume_session, options sync) within two resync
 * intervals: a player whose plugin stopped syncing is gone even if its logout was lost.
 */

/** Why rhythmc_upload_session_refusal refuses a session (its answers but null). */
export type UploadSessionRefusal = 'no_session' | 'other_uid' | 'other_server' | 'expired_other_server' | 'not_renewed';

/** The 401 message of each reason: the one wording, of both upload statements' answers. */
const REFUSAL_MESSAGES: Record<UploadSessionRefusal, string> = {
  no_session: 'Invalid or expired player access token',
  other_uid: 'The access token does not belong to this uid',
  other_server: 'The player session belongs to another server session',
  expired_other_server:
    'The player access token has expired and the player has no online session under this server session',
  not_renewed: 'The player access token has expired and the player session was not renewed within two resync intervals',
};

/** The 401 of a refused upload session (an answer of rhythmc_upload_session_refusal). */
export function uploadSessionError(refusal: UploadSessionRefusal): UnauthorizedError {
  const message = Object.hasOwn(REFUSAL_MESSAGES, refusal) ? REFUSAL_MESSAGES[refusal] : undefined;
  if (message === undefined) throw new Error(`Unknown upload session refusal: ${String(refusal)}`);
  return new UnauthorizedError(message);
}

/** A CTE `name` with the player_session row of the token hash. */
export const playerSessionByTokenHashCte = (name: string, tokenHashParam: string): string =>
  `${name} AS (SELECT id, uid, server_session_id, token_expires_at, renewed_at, logged_out_at FROM player_session WHERE token_hash = ${tokenHashParam})`;

/**
 * The rule over a row `alias` of that CTE (its columns null when no row: 'no_session'): the
 * reason the session is refused, null when accepted. The function is inlined by the planner.
 */
export const uploadSessionRefusal = (
  alias: string,
  p: { uid: string; serverSession: string; now: string; liveSince: string },
): string =>
  `rhythmc_upload_session_refusal(${alias}.uid, ${alias}.logged_out_at, ${alias}.server_session_id, ` +
  `${alias}.token_expires_at, ${alias}.renewed_at, ${p.uid}, ${p.serverSession}, ${p.now}, ${p.liveSince})`;

@Injectable()
export class UploadSessionRule {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: TokenService,
  ) {}

  /** The stored form of a player access token: the upload statement looks the session up by it. */
  tokenHash(token: string): string {
    return this.tokens.hash(token);
  }

  /**
   * The instant an upload is judged at: now, and the oldest renewal that still counts as a live
   * player (two resync intervals back). Taken once per upload statement and given to it as
   * parameters, so every clause of the rule judges the same instant.
   */
  clock(): UploadSessionClock {
    const now = Date.now();
    return { now: new Date(now), liveSince: new Date(now - 2 * this.config.playerResyncIntervalSeconds * 1000) };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnauthorizedError } from '../common/errors/app-error';
import type { PlayerSessionContext, ServerSessionContext, UploadSessionClock, UploadSessionRow } from './auth.types';
import { TokenService } from './token.service';

/*
 * Which player session an upload may run under (interface.md POST /player/upload), in its two
 * forms: SQL for the upload statement, which reads the session row and writes the record in one
 * round trip (its hot path), so it stores nothing for a session the check refuses; TypeScript for
 * the answer (which 401 and why). Both are here, side by side, and take the same clock readings
 * as parameters, so the two judge one instant; test/e2e/upload-session-rule.e2e-spec.ts runs both
 * over the same session rows and asserts they agree row by row. Change one, change the other.
 *
 * The rule: the player token's session must not be logged out (logout, ban, the end of its server
 * session and the player's next login all close it) and must belong to `uid`; it must be bound to
 * the calling server session (live: its bearer token was just accepted); and its token must be
 * unexpired, or else the session renewed (login, resume_session, options sync) within two resync
 * intervals: a player whose plugin stopped syncing is gone even if its logout was lost.
 */

/** A CTE `name` with the player_session row of the token hash (the columns UploadSessionRow holds). */
export const playerSessionByTokenHashCte = (name: string, tokenHashParam: string): string =>
  `${name} AS (SELECT id, uid, server_session_id, token_expires_at, renewed_at, logged_out_at FROM player_session WHERE token_hash = ${tokenHashParam})`;

/**
 * The rule over a row `alias` of that CTE: true exactly when UploadSessionRule.check accepts the
 * row. The SQL is the function rhythmc_upload_session_accepted (auth/sql/rhythmc_upload_session_accepted.sql),
 * which the one-statement upload calls too; the planner inlines it.
 */
export const uploadSessionAccepted = (
  alias: string,
  p: { uid: string; serverSession: string; now: string; liveSince: string },
): string =>
  `rhythmc_upload_session_accepted(${alias}.uid, ${alias}.logged_out_at, ${alias}.server_session_id, ` +
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
   * player (two resync intervals back). Taken once and given to both the upload statement and
   * check(), so the two judge the same instant.
   */
  clock(): UploadSessionClock {
    const now = Date.now();
    return { now: new Date(now), liveSince: new Date(now - 2 * this.config.playerResyncIntervalSeconds * 1000) };
  }

  /**
   * The rule over the session row the upload statement read (null: no session has this token
   * hash): the session, or 401 with the reason.
   */
  check(
    session: UploadSessionRow | null,
    uid: string,
    server: ServerSessionContext,
    clock: UploadSessionClock,
  ): PlayerSessionContext & { tokenExpired: boolean } {
    if (!session || session.loggedOutAt !== null) throw new UnauthorizedError('Invalid or expired player access token');
    if (session.uid !== uid) throw new UnauthorizedError('The access token does not belong to this uid');
    const tokenExpired = session.tokenExpiresAt.getTime() <= clock.now.getTime();
    if (session.serverSessionId !== server.sessionId) {
      throw new UnauthorizedError(
        tokenExpired
          ? 'The player access token has expired and the player has no online session under this server session'
          : 'The player session belongs to another server session',
      );
    }
    if (tokenExpired && session.renewedAt.getTime() <= clock.liveSince.getTime()) {
      throw new UnauthorizedError(
        'The player access token has expired and the player session was not renewed within two resync intervals',
      );
    }
    return {
      sessionId: session.id,
      uid: session.uid,
      serverSessionId: session.serverSessionId,
      tokenExpiresAt: session.tokenExpiresAt,
      tokenExpired,
    };
  }
}

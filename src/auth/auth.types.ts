/** The server session a request runs under, resolved from its bearer access token. */
export interface ServerSessionContext {
  sessionId: string;
  serverId: number;
  tokenExpiresAt: Date;
  /** SHA-256 of the presented token (refresh rotates exactly this one). */
  tokenHash: string;
}

/** A live player session, resolved from a player access token. */
export interface PlayerSessionContext {
  sessionId: string;
  uid: string;
  serverSessionId: string;
  tokenExpiresAt: Date;
}

/** A player session resolved from its token, with whether it was opened with proof of ownership. */
export interface ResolvedPlayerSession extends PlayerSessionContext {
  proven: boolean;
}

/** A live player session and where it is bound (player login: conflict, handover or takeover). */
export interface LivePlayerSession {
  sessionId: string;
  serverSessionId: string;
  serverId: number;
  /** Opened with proof of ownership (docs/decisions.md "Server switching"). */
  proven: boolean;
}

/** A player session as an upload's statement reads it by token hash (playerSessionByTokenHashCte in upload-session.rule.ts). */
export interface UploadSessionRow {
  id: string;
  uid: string;
  serverSessionId: string;
  tokenExpiresAt: Date;
  renewedAt: Date;
  loggedOutAt: Date | null;
}

/** The instant an upload's session is judged at (UploadSessionRule.clock). */
export interface UploadSessionClock {
  now: Date;
  /** A session renewed at or before this is no longer a live player's. */
  liveSince: Date;
}

export type RequestAuth =
  | { kind: 'public' }
  | { kind: 'admin'; /** Which admin credential: an id for the audit log, never the token. */ credentialId: string }
  | {
      kind: 'bootstrap';
      serverId: number;
      /** SHA-256 of the presented bootstrap token: the login limit's key. */ credentialHash: string;
    }
  | { kind: 'server'; session: ServerSessionContext }
  /** A call of the public API: its key's id, or null for the anonymous tier (set by the route's ApiKeyGuard). */
  | { kind: 'api-key'; keyId: number | null };

/** The credential id of ADMIN_TOKEN in the audit log. */
export const ADMIN_TOKEN_CREDENTIAL_ID = 'admin';

/** `api-key`: the public API; the route's own guard (`@PublicApiAuth`, src/public) checks the key. */
export type AuthKind = 'public' | 'admin' | 'bootstrap' | 'server' | 'server-refresh' | 'api-key';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: RequestAuth;
  }
}

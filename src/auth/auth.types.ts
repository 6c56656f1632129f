import type { Role } from './permissions';

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

/** The instant an upload's session is judged at (UploadSessionRule.clock, given to rhythmc_upload_session_refusal). */
export interface UploadSessionClock {
  now: Date;
  /** A session renewed at or before this is no longer a live player's. */
  liveSince: Date;
}

/** Who calls the admin API: a staff account, or the owner's break-glass ADMIN_TOKEN. */
export interface AdminCaller {
  /** The staff account's id; null for ADMIN_TOKEN. */
  accountId: number | null;
  /** The account's name, or `ADMIN_TOKEN`. */
  name: string;
  /** What the caller may do now (a token's role is at most its account's). */
  role: Role;
  /** Which credential, for the audit log (never the secret): `admin`, `session:<id>` or `token:<id>`. */
  credentialId: string;
  /** The console session's row id when the caller signed in (sign-out ends exactly it). */
  sessionId: string | null;
}

export type RequestAuth =
  | { kind: 'public' }
  /** The console's sign-in: nobody yet, from the console's own origin. */
  | { kind: 'sign-in' }
  | { kind: 'admin'; caller: AdminCaller }
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
/** The audit log's actor for ADMIN_TOKEN (no staff account can have this name: names are lower-case). */
export const ADMIN_TOKEN_ACTOR = 'ADMIN_TOKEN';
/** The audit log's actor of a failed sign-in (nobody proved who they are). */
export const ANONYMOUS_ACTOR = 'anonymous';
/** A staff account's name: 2 to 32 of lower-case letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const STAFF_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{1,31}$/;
/** Names an account cannot take: they mean someone else in the audit log. */
export const RESERVED_STAFF_NAMES: readonly string[] = [ANONYMOUS_ACTOR, 'unknown'];

/**
 * `sign-in`: POST /admin/session, open to anyone from the console's origin while the admin API is on.
 * `api-key`: the public API; the route's own guard (`@PublicApiAuth`, src/public) checks the key.
 */
export type AuthKind = 'public' | 'admin' | 'sign-in' | 'bootstrap' | 'server' | 'server-refresh' | 'api-key';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: RequestAuth;
  }
}

import type { RequestAuth } from './auth.types';
import { addressBucket } from '../common/http/client-ip';

/**
 * Who is calling, as one short string, for what is shared fairly between callers (the
 * BoardCountGate's windows, the rank counts while the index rebuilds): a game server (all its
 * sessions), a staff account or ADMIN_TOKEN, a public API key, or the anonymous tier's address
 * (TRUST_PROXY; read only for it: the walk of X-Forwarded-For is not free on the hot public
 * reads). Never a secret: ids only.
 */
export function callerKey(auth: RequestAuth | undefined, address: () => string | null): string {
  switch (auth?.kind) {
    case 'server':
      return serverCallerKey(auth.session.serverId);
    case 'bootstrap':
      return serverCallerKey(auth.serverId);
    case 'admin':
      return auth.caller.accountId === null ? 'staff:admin-token' : `staff:${auth.caller.accountId}`;
    case 'api-key':
      if (auth.keyId !== null) return `key:${auth.keyId}`;
      break;
  }
  return `address:${addressBucket(address())}`;
}

/** A game server as a caller (all its sessions): callerKey's answer for a server's request. */
export function serverCallerKey(serverId: number): string {
  return `server:${serverId}`;
}

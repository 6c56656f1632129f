/**
 * Staff roles and what each may do (docs/operations.md "Staff roles"; docs/decisions.md "Staff
 * accounts"). Roles are a ladder: each holds every permission of the roles below it. The one table
 * is PERMISSIONS: a permission and the lowest role that holds it. Every admin route declares one
 * permission (`@Permission`), and the AuthGuard refuses a route that declares none.
 */
export const ROLES = ['read-only', 'support', 'moderator', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  'account.self': { role: 'read-only', what: 'see who they are; sign out; change their password; their API tokens' },
  'overview.read': { role: 'read-only', what: 'the overview' },
  'players.read': { role: 'read-only', what: 'players, profiles, balances and bans' },
  'servers.read': { role: 'read-only', what: 'servers and their WebSocket connections' },
  'catalog.read': { role: 'read-only', what: 'charts and collections' },
  'boards.read': { role: 'read-only', what: 'the boards' },
  'plays.read': { role: 'read-only', what: 'the flagged plays and their details' },
  'players.create': { role: 'support', what: 'create players (for Net Token logins)' },
  'players.net-token': { role: 'support', what: 'issue Net Tokens' },
  'players.ban': { role: 'moderator', what: 'ban, unban, set the warning level (banstate)' },
  'plays.review': { role: 'moderator', what: 'approve, void and restore flagged plays' },
  'servers.logout': { role: 'moderator', what: "log a server's session out" },
  'audit.read': { role: 'moderator', what: 'the audit log' },
  'servers.manage': { role: 'admin', what: 'register servers, rotate bootstrap tokens' },
  'settings.write': { role: 'admin', what: 'maintenance, plugin policy, session handover' },
  'catalog.write': { role: 'admin', what: 'import charts and collections' },
  'resources.write': { role: 'admin', what: 'resource packs, the resource rescan' },
  'ratings.recompute': { role: 'admin', what: 'recompute every rating' },
  'api-keys.manage': { role: 'admin', what: "the public read API's keys: list, create, change, revoke" },
  'webhooks.manage': { role: 'admin', what: 'outgoing webhooks: list, register, change, delete, their delivery logs' },
  'seasons.manage': { role: 'admin', what: 'seasons: create, change, close early, delete; their close rules' },
  'players.export': { role: 'admin', what: "export every row of a player's data (a privacy request)" },
  'players.erase': { role: 'admin', what: 'erase a player (a privacy request; cannot be undone)' },
  'database.backup': { role: 'owner', what: 'download a backup of the embedded database (it holds every account)' },
  'staff.manage': {
    role: 'owner',
    what: 'staff accounts: create, change role, disable, delete, reset passwords, revoke their tokens',
  },
} as const satisfies Record<string, { role: Role; what: string }>;
export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Position on the ladder: read-only 0 … owner 4. */
export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** The lower of two roles (a token's role is at most its account's). */
export function lowerRole(a: Role, b: Role): Role {
  return roleRank(a) <= roleRank(b) ? a : b;
}

export function roleAllows(role: Role, permission: Permission): boolean {
  return roleRank(role) >= roleRank(PERMISSIONS[permission].role);
}

/** Every permission of a role, in the table's order. */
export function permissionsOf(role: Role): Permission[] {
  return PERMISSION_NAMES.filter((permission) => roleAllows(role, permission));
}

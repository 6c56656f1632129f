export interface MaintenanceSetting {
  enabled: boolean;
  message: string;
}

export interface PluginPolicy {
  minPluginVersion: number;
  latestPluginVersion: number;
  allowedPluginSHAs: string[];
  downUrl: string;
}

export const DEFAULT_MAINTENANCE: MaintenanceSetting = { enabled: false, message: '' };

/** The player login modes a handover may be done for (docs/decisions.md "Server switching"). */
export type HandoverLoginMode = 'ONLINE' | 'TOKEN' | 'OFFLINE_REFRESH';

/**
 * Which game servers form one network, inside which a player login through one server takes the
 * player's live session over from another instead of answering 409. `off`: none (the spec's 409);
 * `all`: every registered server is one network; `groups`: each group is one network.
 */
export interface SessionHandoverSetting {
  mode: 'off' | 'all' | 'groups';
  groups: Array<{ name: string; serverIDs: number[] }>;
  modes: HandoverLoginMode[];
}

export const HANDOVER_LOGIN_MODES: HandoverLoginMode[] = ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'];

export const DEFAULT_SESSION_HANDOVER: SessionHandoverSetting = {
  mode: 'off',
  groups: [],
  modes: HANDOVER_LOGIN_MODES,
};

/**
 * True when servers `a` and `b` are one network under the setting: the same server, every server
 * (`all`), or one group (`groups`). `off` declares no network.
 */
export function inOneNetwork(setting: SessionHandoverSetting, a: number, b: number): boolean {
  if (a === b || setting.mode === 'all') return true;
  if (setting.mode === 'groups')
    return setting.groups.some((group) => group.serverIDs.includes(a) && group.serverIDs.includes(b));
  return false;
}

/** The servers of the group named `name`: none when the setting is not in mode `groups` or has no such group. */
export function groupServers(setting: SessionHandoverSetting, name: string): number[] {
  if (setting.mode !== 'groups') return [];
  return [...(setting.groups.find((group) => group.name === name)?.serverIDs ?? [])];
}

/** True when a login through server `to` may take over a session bound to server `from` under the setting. */
export function mayHandOver(setting: SessionHandoverSetting, from: number, to: number, mode: string): boolean {
  return from !== to && setting.modes.some((allowed) => allowed === mode) && inOneNetwork(setting, from, to);
}

/**
 * The servers a chat line from `serverId` is delivered to (docs/decisions.md "Server switching"):
 * with `groups`, the sender's group (a server in no group is a network by itself); otherwise
 * every server (null), as decisions.md §7 says.
 */
export function chatAudience(setting: SessionHandoverSetting, serverId: number): number[] | null {
  if (setting.mode !== 'groups') return null;
  return setting.groups.find((group) => group.serverIDs.includes(serverId))?.serverIDs ?? [serverId];
}

/**
 * Which stored home servers share server `serverId`'s group, for the home-server rule
 * (rhythmc_player_home_moves, docs/decisions.md "Scoped boards: groups and countries"): with
 * `inGroup`, the servers of its group; without (a server in no group, or a setting not in mode
 * `groups`: "no group"), every server that is in a group, i.e. the ones outside its "no group".
 */
export interface HomeGroup {
  inGroup: boolean;
  servers: number[];
}

export function homeGroup(setting: SessionHandoverSetting, serverId: number): HomeGroup {
  if (setting.mode !== 'groups') return { inGroup: false, servers: [] };
  const own = setting.groups.find((group) => group.serverIDs.includes(serverId));
  if (own) return { inGroup: true, servers: [...own.serverIDs] };
  return { inGroup: false, servers: setting.groups.flatMap((group) => group.serverIDs) };
}

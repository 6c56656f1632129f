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

/** True when a login through server `to` may take over a session bound to server `from` under the setting. */
export function mayHandOver(setting: SessionHandoverSetting, from: number, to: number, mode: string): boolean {
  if (from === to || !setting.modes.some((allowed) => allowed === mode)) return false;
  if (setting.mode === 'all') return true;
  if (setting.mode === 'groups')
    return setting.groups.some((group) => group.serverIDs.includes(from) && group.serverIDs.includes(to));
  return false;
}

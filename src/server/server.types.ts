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

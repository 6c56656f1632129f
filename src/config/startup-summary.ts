import { isIP } from 'node:net';
import type { AppConfig } from './app-config';

/** Where a database or Redis URL points, without its credentials. */
function endpointOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
}

function trustedProxyOf(trustProxy: AppConfig['trustProxy']): string {
  if (trustProxy === false) return 'none';
  if (typeof trustProxy === 'number') return `${trustProxy} hop${trustProxy === 1 ? '' : 's'}`;
  return trustProxy.join(', ');
}

/** Loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * The one line that says how this instance runs: where it listens, on which database, with or
 * without Redis, which optional surfaces are on, and whom it trusts for client addresses.
 */
export function startupSummary(config: AppConfig, port: number, version: string): string {
  const scheme = config.tlsCertFile ? 'https' : 'http';
  const parts = [
    `listening on ${scheme}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    config.databaseUrl
      ? `database PostgreSQL ${endpointOf(config.databaseUrl)}`
      : `database embedded in ${config.dataDir}`,
    ...(config.databaseReadUrl
      ? [`reads that tolerate ${config.databaseReadMaxLagSeconds} s of lag from ${endpointOf(config.databaseReadUrl)}`]
      : []),
    config.redisUrl ? `Redis ${endpointOf(config.redisUrl)}` : 'no Redis (events and limits in this process)',
    config.adminToken ? 'admin API on' : 'admin API off (no ADMIN_TOKEN)',
    ...(config.site ? [`leaderboard site at ${config.site.path}`] : []),
    config.metricsToken ? '/metrics needs METRICS_TOKEN' : '/metrics open',
    config.tlsCertFile ? 'TLS on' : 'TLS off',
    `trusted proxies: ${trustedProxyOf(config.trustProxy)}`,
  ];
  return `rhythmc-backend ${version}: ${parts.join('; ')}`;
}

/** The warning for a /metrics anyone who reaches the port can read; null when there is nothing to warn about. */
export function openMetricsWarning(config: AppConfig, port: number): string | null {
  if (config.metricsToken !== null || isLoopbackHost(config.host)) return null;
  return `/metrics is open to anyone who reaches ${config.host}:${port}: set METRICS_TOKEN, or keep the port inside the private network`;
}

/** The Node.js major the service is built and tested on (package.json engines, Dockerfile, CI). */
export const SUPPORTED_NODE_MAJOR = 24;

/** A warning when the service runs on an older Node.js than it is tested on; null otherwise. */
export function unsupportedNodeWarning(version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= SUPPORTED_NODE_MAJOR) return null;
  return `Node.js ${version} is older than the Node.js ${SUPPORTED_NODE_MAJOR} LTS this service is built and tested on: upgrade (package.json engines)`;
}

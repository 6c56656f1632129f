import { isAbsolute, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { familyTrustedWhole, NAMED_PROXY_RANGES } from './trust-proxy-ranges';

/** Typed, validated configuration. Built once at boot from the environment (decisions.md §1). */
export interface AppConfig {
  port: number;
  host: string;
  publicBaseUrl: string;
  assetServerUrl: string;
  wsServerUrl: string;
  databaseUrl: string | null;
  /** Apply pending migrations at start (true), or only check that none is pending (the two-role set-up). */
  migrateOnStart: boolean;
  /**
   * How DATABASE_URL's connections are pooled (docs/operations.md "PgBouncer"): `session` (a direct
   * connection, or a pooler in session mode) or `transaction` (PgBouncer's transaction pooling: no
   * named prepared statements, no session-level locks on the pooled connections).
   */
  databasePoolMode: DatabasePoolMode;
  /** A direct connection for the migrations (not through a transaction pooler); null: DATABASE_URL. */
  migrationDatabaseUrl: string | null;
  /**
   * A streaming replica of DATABASE_URL for the reads that tolerate a little lag (docs/decisions.md
   * "Read replica"); null: every read goes to DATABASE_URL.
   */
  databaseReadUrl: string | null;
  /** Connections of the replica's own pool. */
  databaseReadPoolSize: number;
  /** Reads go to the primary while the replica is known to be further behind than this. */
  databaseReadMaxLagSeconds: number;
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every Redis key and channel, so deployments (or test runs) can share one Redis. */
  redisKeyPrefix: string;
  adminToken: string | null;
  /** Bearer token required by GET /metrics; null: /metrics is open (scraped inside the private network). */
  metricsToken: string | null;
  identityProviderUrl: string;
  resourceDir: string;
  cdnBaseUrl: string | null;
  /** Lifetime of the signed resource links the service hands out without CDN_BASE_URL. */
  resourceLinkTtlSeconds: number;
  serverTokenTtlSeconds: number;
  /** How long after expiry a server token may still be refreshed (decisions.md §3: 60 s). */
  serverTokenRefreshGraceSeconds: number;
  playerTokenTtlSeconds: number;
  /** The plugin's resume_session interval; an expired-token upload needs a renewal within two of them. */
  playerResyncIntervalSeconds: number;
  resumeTokenTtlSeconds: number;
  /** Server logins per window for one presented bootstrap credential; failed ones also per source address. */
  throttleLoginLimit: number;
  throttleLoginTtlSeconds: number;
  /** Player logins and logouts per window for one calling server session. */
  throttlePlayerLoginLimit: number;
  throttlePlayerLoginTtlSeconds: number;
  /** Wrong Net Tokens one server session may send per window (then its TOKEN logins answer 429 until the window ends). */
  throttleTokenSessionFailures: number;
  throttleTokenSessionWindowSeconds: number;
  /** Wrong Net Tokens one server may send per window, across its sessions. */
  throttleTokenServerFailures: number;
  throttleTokenServerWindowSeconds: number;
  /** `chat` frames a second per server session (all its sockets, every instance), and how many may come at once. */
  chatLinesPerSecond: number;
  chatBurst: number;
  /** Open WebSockets per server session on one instance; one more closes the oldest (4003). */
  wsConnectionsPerServerSession: number;
  /** Express `trust proxy`: which X-Forwarded-For hops are believed for the client address. */
  trustProxy: TrustProxy;
  /** Wrong admin (or metrics) tokens in a row from one address before that address is locked out of it. */
  throttleAdminAuthMaxFailures: number;
  throttleAdminAuthLockoutSeconds: number;
  /**
   * Wrong passwords in a row for one staff account from browsers it has not signed in on before
   * (and, separately, from each browser it has) before those are locked out of it.
   */
  throttleSignInAccountMaxFailures: number;
  /** A console session ends after this long without a request… */
  staffSessionIdleSeconds: number;
  /** …and this long after its sign-in in any case. */
  staffSessionMaxSeconds: number;
  /** How long a stopping service waits for in-flight requests before it closes their connections. */
  shutdownTimeoutSeconds: number;
  /** How long the embedded database is started again after it stopped, before the process exits with 1. */
  embeddedRecoverySeconds: number;
  /** How often the embedded database's tables are analyzed and vacuumed where autovacuum would (it has no autovacuum). */
  embeddedMaintenanceSeconds: number;
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  logLevel: LogLevel;
  /** The score consistency checks that run on every upload (SCORE_CHECKS_DISABLED turns some off). */
  scoreChecks: ReadonlySet<ScoreCheckName>;
  /** A play whose payload.time is older than this fails the `time` check. */
  scoreMaxAgeHours: number;
  /** Public API (docs/decisions.md "Public API"): calls a minute of a key without a limit of its own. */
  publicApiKeyRateLimit: number;
  /** Calls a minute per client address without a key; 0: the anonymous tier is off (every call needs a key). */
  publicApiAnonymousRateLimit: number;
  /** Origins (scheme://host[:port]) whose pages may read the public API; `*` any origin; empty: none. */
  publicApiCorsOrigins: readonly string[];
  /** `Cache-Control: max-age` of the public API's answers. */
  publicApiMaxAgeSeconds: number;
  /** Optional fields an operator turned on in public answers (PUBLIC_API_FIELDS). */
  publicApiFields: ReadonlySet<PublicApiField>;
  /**
   * Webhooks (docs/decisions.md "Webhooks"): address ranges a delivery may reach although they are
   * not public (WEBHOOK_ALLOWED_NETWORKS, CIDR); by default only public unicast addresses.
   */
  webhookAllowedNetworks: readonly string[];
  /** One delivery attempt, connect to the last byte read. */
  webhookTimeoutSeconds: number;
  /** Delivery attempts in flight per instance. */
  webhookConcurrency: number;
  /**
   * Of those, at most this many for one webhook (default half, at least 1): a slow receiver keeps
   * the rest for the others.
   */
  webhookConcurrencyPerWebhook: number;
  /** How often an instance looks for due deliveries. */
  webhookPollMs: number;
  /** The first retry's delay; each next one doubles, up to an hour. */
  webhookRetryBaseMs: number;
  /** A delivery is retried this long after its event before it is given up. */
  webhookRetryForSeconds: number;
  /** A webhook whose every attempt failed for this long is turned off (staff are told). */
  webhookDisableAfterSeconds: number;
  /** The IANA time zone of the day, week (from Monday) and month boards' boundaries. */
  periodTimeZone: string;
  /** How often the period job looks for periods to create, close and archive. */
  periodJobIntervalSeconds: number;
  /** The public leaderboard site (docs/operations.md "Leaderboard site"): null when SITE_ENABLED is not true. */
  site: SiteConfig | null;
  /** Purges of old rows (docs/operations.md "Retention"): every one off unless its variable names a number of days. */
  retention: RetentionConfig;
}

/** What each retention setting purges is src/retention/retention.map.ts; the variable that sets it is here. */
export const RETENTION_VARIABLES = {
  sessions: 'RETENTION_SESSIONS_DAYS',
  wsConnections: 'RETENTION_WS_CONNECTIONS_DAYS',
  balanceHistory: 'RETENTION_BALANCE_HISTORY_DAYS',
  failedPlays: 'RETENTION_FAILED_PLAYS_DAYS',
  webhookDeliveries: 'RETENTION_WEBHOOK_DELIVERIES_DAYS',
} as const;
export type RetentionSetting = keyof typeof RETENTION_VARIABLES;
/** The longest retention a variable may name (100 years); longer is a typo. */
export const RETENTION_MAX_DAYS = 36_500;

export interface RetentionConfig {
  /** Days a row is kept after it ended, per setting; null: off (nothing is deleted). */
  days: Readonly<Record<RetentionSetting, number | null>>;
  /** Rows deleted per batch (one short transaction each). */
  batchSize: number;
  /** How often an instance runs the purges that are on. */
  intervalMinutes: number;
}

/** The leaderboard site's settings, checked at boot. */
export interface SiteConfig {
  /** Where it is served: one path segment, e.g. /site (SITE_PATH). */
  path: string;
  /** The network's name in the page's title and header (SITE_NAME). */
  name: string;
  /** #rrggbb colours of links, highlights and the page (SITE_ACCENT_COLOR, SITE_BACKGROUND_COLOR). */
  accentColor: string;
  backgroundColor: string;
}

/** First path segments the service answers itself: SITE_PATH may not take one. */
const RESERVED_SITE_SEGMENTS = [
  'admin',
  'console',
  'docs',
  'games',
  'health',
  'metrics',
  'player',
  'public',
  'resources',
  'server',
  'ws',
];
const SITE_NAME_MAX = 64;

/** Fields the public API leaves out unless PUBLIC_API_FIELDS names them. */
export const PUBLIC_API_FIELDS = ['balance'] as const;
export type PublicApiField = (typeof PUBLIC_API_FIELDS)[number];

/** Every named consistency check of an uploaded play (docs/decisions.md "Score integrity"). */
export const SCORE_CHECK_NAMES = [
  'fullCombo',
  'allPerfect',
  'maxCombo',
  'noteCount',
  'perfectAccuracy',
  'accuracy',
  'time',
] as const;
export type ScoreCheckName = (typeof SCORE_CHECK_NAMES)[number];

/** `false`: the socket's address; a hop count; or the addresses/CIDRs/named ranges of trusted proxies. */
export type TrustProxy = false | number | string[];

export const DATABASE_POOL_MODES = ['session', 'transaction'] as const;
export type DatabasePoolMode = (typeof DATABASE_POOL_MODES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }

  /** One error for every variable that failed: an operator fixes them all before the next start. */
  static of(errors: ConfigError[]): ConfigError {
    if (errors.length === 1) return errors[0];
    const error = new ConfigError(
      errors.map((e) => e.variable).join(', '),
      errors.map((e) => `\n  ${e.variable} ${e.detail}`).join(''),
    );
    error.message = `Invalid configuration (${errors.length} variables):${error.detail}`;
    return error;
  }
}

/** DI token of the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');

type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
  const parsed = Number(value);
  if (parsed < min || parsed > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${parsed}`);
  return parsed;
}

/** `off` (or unset): null; otherwise a whole number of days. 0 is refused: "keep nothing" is never a default or a slip. */
function retentionDays(env: Env, name: string): number | null {
  const value = raw(env, name);
  if (value === undefined || value.toLowerCase() === 'off') return null;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > RETENTION_MAX_DAYS)
    throw new ConfigError(name, `must be a number of days from 1 to ${RETENTION_MAX_DAYS}, or off, got "${value}"`);
  return Number(value);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (value !== 'true' && value !== 'false') throw new ConfigError(name, `must be true or false, got "${value}"`);
  return value === 'true';
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${value}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return value.replace(/(?<!\/)\/+$/, '');
}

/**
 * An origin, optionally with a path, that the service appends paths to (advertised addresses,
 * links): a query, a fragment or credentials would end up in the middle of every link, so they are
 * refused; the answer is the parsed form (scheme and host in lower case, default port dropped)
 * without trailing slashes, so `HTTPS://Host/` becomes `https://host`.
 */
function baseUrl(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const value = url(env, name, null, protocols);
  if (value === null) return fallback;
  const parsed = new URL(value);
  if (parsed.search !== '' || parsed.hash !== '' || value.includes('?') || value.includes('#'))
    throw new ConfigError(name, `must not have a query or fragment, got "${value}"`);
  if (parsed.username !== '' || parsed.password !== '')
    throw new ConfigError(name, 'must not carry a user name or password');
  let path = parsed.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  return `${parsed.protocol}//${parsed.host}${path}`;
}

/** A bearer token set by the operator: printable ASCII without spaces, so that a header can carry it. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function prefix(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(value))
    throw new ConfigError(name, `must be 1-64 characters of A-Z a-z 0-9 : _ . -, got "${value}"`);
  return value;
}

function path(env: Env, name: string, fallback: string, cwd: string): string {
  const value = raw(env, name) ?? fallback;
  return isAbsolute(value) ? value : resolve(cwd, value);
}

/**
 * TRUST_PROXY in Express `trust proxy` form: unset or `false` trusts no proxy; a number trusts that
 * many hops from the socket; otherwise a comma-separated list of addresses, CIDR ranges and the
 * named ranges loopback, linklocal, uniquelocal. `true` (trust every hop, so any client can pick its
 * own address) is refused, and so is a list whose ranges together cover every IPv4 or every IPv6
 * address (familyTrustedWhole): name the hops or the proxies.
 */
function trustProxy(env: Env, name: string): TrustProxy {
  const value = raw(env, name);
  if (value === undefined || value.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 32) throw new ConfigError(name, `must be a hop count from 1 to 32, got ${hops}`);
    return hops;
  }
  if (value.toLowerCase() === 'true') {
    throw new ConfigError(
      name,
      'must not be "true" (every client could choose its own address): give a hop count or the proxies\' addresses',
    );
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const family = familyTrustedWhole(entries);
  if (family !== null) {
    throw new ConfigError(
      name,
      `must not trust every ${family} address (its ranges together cover them all, so every client could choose its own address): give a hop count or the proxies' addresses`,
    );
  }
  for (const entry of entries) {
    if (Object.hasOwn(NAMED_PROXY_RANGES, entry)) continue;
    try {
      proxyaddr.compile(entry);
    } catch {
      throw new ConfigError(
        name,
        `must be a hop count or a list of addresses, CIDR ranges, ${Object.keys(NAMED_PROXY_RANGES).join(', ')}; "${entry}" is none of these`,
      );
    }
  }
  return entries;
}

/** SCORE_CHECKS_DISABLED: a comma-separated list of check names; every other check runs. */
function scoreChecks(env: Env, name: string): ReadonlySet<ScoreCheckName> {
  const disabled = (raw(env, name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of disabled) {
    if (!(SCORE_CHECK_NAMES as readonly string[]).includes(entry)) {
      throw new ConfigError(
        name,
        `must list check names among ${SCORE_CHECK_NAMES.join(', ')}; "${entry}" is none of them`,
      );
    }
  }
  return new Set(SCORE_CHECK_NAMES.filter((check) => !disabled.includes(check)));
}

/** A comma-separated list of names, each one of `allowed`. */
function nameList<T extends string>(env: Env, name: string, allowed: readonly T[]): ReadonlySet<T> {
  const entries = (raw(env, name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!(allowed as readonly string[]).includes(entry))
      throw new ConfigError(name, `must list names among ${allowed.join(', ')}; "${entry}" is none of them`);
  }
  return new Set(entries as T[]);
}

/** A comma-separated list of IP addresses or CIDR ranges (WEBHOOK_ALLOWED_NETWORKS). */
function networkList(env: Env, name: string): readonly string[] {
  const entries = (raw(env, name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    let valid = ipaddr.isValid(entry);
    if (entry.includes('/'))
      try {
        ipaddr.parseCIDR(entry);
        valid = true;
      } catch {
        valid = false;
      }
    if (!valid) throw new ConfigError(name, `must list IP addresses or CIDR ranges; "${entry}" is neither`);
  }
  return entries;
}

/**
 * PUBLIC_API_CORS_ORIGINS: `*`, or a comma-separated list of origins as a browser sends them in
 * `Origin` (scheme, host and a port other than the scheme's default; no path, no trailing slash).
 */
function corsOrigins(env: Env, name: string): readonly string[] {
  const entries = (raw(env, name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError(name, 'must be "*" alone or a list of origins');
    return ['*'];
  }
  for (const entry of entries) {
    let origin: string | null = null;
    try {
      const parsed = new URL(entry);
      origin = ['http:', 'https:'].includes(parsed.protocol) ? parsed.origin : null;
    } catch {
      origin = null;
    }
    if (origin !== entry)
      throw new ConfigError(
        name,
        `must list origins like https://example.net (scheme and host, a port other than the default, nothing else); "${entry}" is not one${origin ? ` (did you mean ${origin}?)` : ''}`,
      );
  }
  return entries;
}

/** #rrggbb only: the value goes into the site's stylesheet, so nothing but a colour may pass. */
function hexColor(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  if (!/^#[0-9a-fA-F]{6}$/.test(value)) throw new ConfigError(name, `must be a colour like #3366cc, got "${value}"`);
  return value.toLowerCase();
}

/**
 * SITE_*: read only when SITE_ENABLED=true. The site reads the public API's anonymous tier
 * (docs/decisions.md "Leaderboard site"), so it needs PUBLIC_API_ANONYMOUS_RATE_LIMIT above 0.
 */
function siteConfig(env: Env, errors: ConfigError[], anonymousRateLimit: number): SiteConfig | null {
  let enabled = false;
  try {
    enabled = bool(env, 'SITE_ENABLED', false);
  } catch (error) {
    errors.push(error as ConfigError);
  }
  if (!enabled) return null;
  const path = raw(env, 'SITE_PATH') ?? '/site';
  if (!/^\/[a-z0-9-]{1,32}$/.test(path))
    errors.push(new ConfigError('SITE_PATH', `must be one path segment of a-z, 0-9 and - like /site, got "${path}"`));
  else if (RESERVED_SITE_SEGMENTS.includes(path.slice(1)))
    errors.push(new ConfigError('SITE_PATH', `must not be a path the service answers itself (${path})`));
  const name = raw(env, 'SITE_NAME') ?? 'rhythmc';
  // Control characters never; the name is shown as text (never as HTML) and in the title.
  // eslint-disable-next-line no-control-regex
  if ([...name].length > SITE_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name))
    errors.push(new ConfigError('SITE_NAME', `must be 1-${SITE_NAME_MAX} characters without control characters`));
  const colour = (variable: string, fallback: string) => {
    try {
      return hexColor(env, variable, fallback);
    } catch (error) {
      errors.push(error as ConfigError);
      return fallback;
    }
  };
  const accentColor = colour('SITE_ACCENT_COLOR', '#7c5cff');
  const backgroundColor = colour('SITE_BACKGROUND_COLOR', '#11121a');
  if (anonymousRateLimit === 0)
    errors.push(
      new ConfigError(
        'SITE_ENABLED',
        'needs PUBLIC_API_ANONYMOUS_RATE_LIMIT above 0: the site reads the public API without a key, limited per address',
      ),
    );
  return { path, name, accentColor, backgroundColor };
}

/**
 * Variables whose meaning changed: set, they stop the start rather than being ignored (an operator
 * who tuned them would otherwise run with limits they never chose).
 */
const RETIRED_VARIABLES: Array<[string, string]> = [
  [
    'THROTTLE_TOKEN_MAX_FAILURES',
    'wrong Net Tokens are limited per server session and per server: THROTTLE_TOKEN_SESSION_FAILURES, THROTTLE_TOKEN_SERVER_FAILURES (docs/decisions.md "Rate limits")',
  ],
  [
    'THROTTLE_TOKEN_LOCKOUT_SECONDS',
    'wrong Net Tokens are limited per server session and per server: THROTTLE_TOKEN_SESSION_WINDOW_SECONDS, THROTTLE_TOKEN_SERVER_WINDOW_SECONDS (docs/decisions.md "Rate limits")',
  ],
];

/** An IANA time zone name (as Intl knows them; PostgreSQL's tz database has the same names). */
function timeZone(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  if (!/^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/.test(value))
    throw new ConfigError(name, `must be an IANA time zone like Europe/Berlin, got "${value}"`);
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
  } catch {
    throw new ConfigError(name, `must be an IANA time zone like Europe/Berlin, got "${value}"`);
  }
  return value;
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): AppConfig {
  // Every variable is read, and every invalid one reported in one message.
  const errors: ConfigError[] = [];
  const read = <T>(value: () => T, fallback: T): T => {
    try {
      return value();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      errors.push(error);
      return fallback;
    }
  };
  const port = read(() => int(env, 'PORT', 3000, 0, 65535), 3000);
  const host = raw(env, 'HOST') ?? '0.0.0.0';
  const tlsCertFile = raw(env, 'TLS_CERT_FILE') ?? null;
  const tlsKeyFile = raw(env, 'TLS_KEY_FILE') ?? null;
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    errors.push(
      new ConfigError(
        tlsCertFile === null ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE',
        'must be set together with the other TLS file',
      ),
    );
  }
  const defaultScheme = tlsCertFile ? 'https' : 'http';
  const defaultBaseUrl = `${defaultScheme}://localhost:${port}`;
  const publicBaseUrl = read(
    () => baseUrl(env, 'PUBLIC_BASE_URL', defaultBaseUrl, ['http:', 'https:']) as string,
    defaultBaseUrl,
  );
  const wsDefault = `${publicBaseUrl.replace(/^http/, 'ws')}/ws`;
  const logLevel = (raw(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    errors.push(new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`));
  }
  const adminToken = raw(env, 'ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) {
    errors.push(new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long'));
  } else if (adminToken !== null && !VISIBLE_ASCII.test(adminToken)) {
    errors.push(new ConfigError('ADMIN_TOKEN', 'must be printable ASCII without spaces (a bearer token)'));
  }
  const metricsToken = raw(env, 'METRICS_TOKEN') ?? null;
  if (metricsToken !== null && (metricsToken.length < 16 || !VISIBLE_ASCII.test(metricsToken))) {
    errors.push(new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long, without spaces'));
  }
  const number = (name: string, fallback: number, min: number, max: number) =>
    read(() => int(env, name, fallback, min, max), fallback);
  const webhookConcurrency = number('WEBHOOK_CONCURRENCY', 8, 1, 256);
  const optionalUrl = (name: string, protocols: string[]) => read(() => url(env, name, null, protocols), null);

  const config: AppConfig = {
    port,
    host,
    publicBaseUrl,
    assetServerUrl: read(
      () => baseUrl(env, 'ASSET_SERVER_URL', publicBaseUrl, ['http:', 'https:']) as string,
      publicBaseUrl,
    ),
    wsServerUrl: read(() => baseUrl(env, 'WS_SERVER_URL', wsDefault, ['ws:', 'wss:']) as string, wsDefault),
    databaseUrl: optionalUrl('DATABASE_URL', ['postgres:', 'postgresql:']),
    migrateOnStart: read(() => bool(env, 'MIGRATE_ON_START', true), true),
    databasePoolMode: read(() => oneOf(env, 'DATABASE_POOL_MODE', DATABASE_POOL_MODES, 'session'), 'session'),
    migrationDatabaseUrl: optionalUrl('MIGRATION_DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseReadUrl: optionalUrl('DATABASE_READ_URL', ['postgres:', 'postgresql:']),
    databaseReadPoolSize: number('DATABASE_READ_POOL_SIZE', 10, 1, 100),
    databaseReadMaxLagSeconds: number('DATABASE_READ_MAX_LAG_SECONDS', 5, 1, 3_600),
    dataDir: path(env, 'DATA_DIR', './data', cwd),
    redisUrl: optionalUrl('REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: read(() => prefix(env, 'REDIS_KEY_PREFIX', 'rhythmc:'), 'rhythmc:'),
    adminToken,
    metricsToken,
    identityProviderUrl: read(
      () => baseUrl(env, 'IDENTITY_PROVIDER_URL', 'https://sessionserver.mojang.com', ['http:', 'https:']) as string,
      '',
    ),
    resourceDir: path(env, 'RESOURCE_DIR', './resources', cwd),
    cdnBaseUrl: read(() => baseUrl(env, 'CDN_BASE_URL', null, ['http:', 'https:']), null),
    resourceLinkTtlSeconds: number('RESOURCE_LINK_TTL_SECONDS', 3_600, 1, 604_800),
    serverTokenTtlSeconds: number('SERVER_TOKEN_TTL_SECONDS', 600, 1, 86_400),
    serverTokenRefreshGraceSeconds: number('SERVER_TOKEN_REFRESH_GRACE_SECONDS', 60, 0, 3_600),
    playerTokenTtlSeconds: number('PLAYER_TOKEN_TTL_SECONDS', 600, 1, 86_400),
    playerResyncIntervalSeconds: number('PLAYER_RESYNC_INTERVAL_SECONDS', 240, 1, 86_400),
    resumeTokenTtlSeconds: number('RESUME_TOKEN_TTL_SECONDS', 604_800, 1, 31_536_000),
    throttleLoginLimit: number('THROTTLE_LOGIN_LIMIT', 20, 1, 1_000_000),
    throttleLoginTtlSeconds: number('THROTTLE_LOGIN_TTL_SECONDS', 60, 1, 86_400),
    throttlePlayerLoginLimit: number('THROTTLE_PLAYER_LOGIN_LIMIT', 600, 1, 1_000_000),
    throttlePlayerLoginTtlSeconds: number('THROTTLE_PLAYER_LOGIN_TTL_SECONDS', 60, 1, 86_400),
    throttleTokenSessionFailures: number('THROTTLE_TOKEN_SESSION_FAILURES', 30, 1, 1_000_000),
    throttleTokenSessionWindowSeconds: number('THROTTLE_TOKEN_SESSION_WINDOW_SECONDS', 60, 1, 86_400),
    throttleTokenServerFailures: number('THROTTLE_TOKEN_SERVER_FAILURES', 300, 1, 1_000_000),
    throttleTokenServerWindowSeconds: number('THROTTLE_TOKEN_SERVER_WINDOW_SECONDS', 3_600, 1, 604_800),
    trustProxy: read(() => trustProxy(env, 'TRUST_PROXY'), false),
    throttleAdminAuthMaxFailures: number('THROTTLE_ADMIN_AUTH_MAX_FAILURES', 10, 1, 1_000_000),
    throttleAdminAuthLockoutSeconds: number('THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS', 900, 1, 86_400),
    throttleSignInAccountMaxFailures: number('THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES', 20, 1, 1_000_000),
    staffSessionIdleSeconds: number('STAFF_SESSION_IDLE_SECONDS', 1_800, 60, 86_400),
    staffSessionMaxSeconds: number('STAFF_SESSION_MAX_SECONDS', 43_200, 60, 2_592_000),
    chatLinesPerSecond: number('CHAT_LINES_PER_SECOND', 5, 1, 10_000),
    chatBurst: number('CHAT_BURST', 20, 1, 100_000),
    wsConnectionsPerServerSession: number('WS_CONNECTIONS_PER_SERVER_SESSION', 3, 1, 100),
    shutdownTimeoutSeconds: number('SHUTDOWN_TIMEOUT_SECONDS', 10, 1, 600),
    embeddedRecoverySeconds: number('EMBEDDED_RECOVERY_SECONDS', 60, 1, 3600),
    embeddedMaintenanceSeconds: number('EMBEDDED_MAINTENANCE_SECONDS', 60, 1, 86_400),
    tlsCertFile: tlsCertFile === null ? null : path(env, 'TLS_CERT_FILE', tlsCertFile, cwd),
    tlsKeyFile: tlsKeyFile === null ? null : path(env, 'TLS_KEY_FILE', tlsKeyFile, cwd),
    logLevel: logLevel as LogLevel,
    scoreChecks: read(() => scoreChecks(env, 'SCORE_CHECKS_DISABLED'), new Set(SCORE_CHECK_NAMES)),
    scoreMaxAgeHours: number('SCORE_MAX_AGE_HOURS', 24, 1, 87_600),
    publicApiKeyRateLimit: number('PUBLIC_API_KEY_RATE_LIMIT', 1_200, 1, 1_000_000),
    publicApiAnonymousRateLimit: number('PUBLIC_API_ANONYMOUS_RATE_LIMIT', 0, 0, 1_000_000),
    publicApiCorsOrigins: read(() => corsOrigins(env, 'PUBLIC_API_CORS_ORIGINS'), []),
    publicApiMaxAgeSeconds: number('PUBLIC_API_MAX_AGE_SECONDS', 10, 0, 86_400),
    publicApiFields: read(() => nameList(env, 'PUBLIC_API_FIELDS', PUBLIC_API_FIELDS), new Set<PublicApiField>()),
    webhookAllowedNetworks: read(() => networkList(env, 'WEBHOOK_ALLOWED_NETWORKS'), []),
    webhookTimeoutSeconds: number('WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60),
    webhookConcurrency,
    webhookConcurrencyPerWebhook: number(
      'WEBHOOK_CONCURRENCY_PER_WEBHOOK',
      Math.max(1, Math.floor(webhookConcurrency / 2)),
      1,
      webhookConcurrency,
    ),
    webhookPollMs: number('WEBHOOK_POLL_MS', 500, 50, 60_000),
    webhookRetryBaseMs: number('WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
    webhookRetryForSeconds: number('WEBHOOK_RETRY_FOR_SECONDS', 90_000, 86_400, 2_592_000),
    webhookDisableAfterSeconds: number('WEBHOOK_DISABLE_AFTER_SECONDS', 86_400, 1, 2_592_000),
    periodTimeZone: read(() => timeZone(env, 'PERIOD_TIME_ZONE', 'UTC'), 'UTC'),
    periodJobIntervalSeconds: number('PERIOD_JOB_INTERVAL_SECONDS', 30, 1, 3_600),
    site: null,
    retention: {
      days: Object.fromEntries(
        Object.entries(RETENTION_VARIABLES).map(([setting, name]) => [
          setting,
          read(() => retentionDays(env, name), null),
        ]),
      ) as Record<RetentionSetting, number | null>,
      batchSize: number('RETENTION_BATCH_SIZE', 2_000, 100, 10_000),
      intervalMinutes: number('RETENTION_INTERVAL_MINUTES', 60, 1, 10_080),
    },
  };
  config.site = siteConfig(env, errors, config.publicApiAnonymousRateLimit);
  if (raw(env, 'DATABASE_URL') === undefined) {
    // The embedded database has no pooler and runs its own migrations.
    // `session` is the default and changes nothing, so the example file's line is accepted.
    if (raw(env, 'DATABASE_POOL_MODE') !== undefined && raw(env, 'DATABASE_POOL_MODE') !== 'session')
      errors.push(new ConfigError('DATABASE_POOL_MODE', 'needs DATABASE_URL (PostgreSQL)'));
    if (raw(env, 'MIGRATION_DATABASE_URL') !== undefined)
      errors.push(new ConfigError('MIGRATION_DATABASE_URL', 'needs DATABASE_URL (PostgreSQL)'));
    if (raw(env, 'DATABASE_READ_URL') !== undefined)
      errors.push(
        new ConfigError(
          'DATABASE_READ_URL',
          'needs DATABASE_URL (PostgreSQL): the embedded database has no replica; unset DATABASE_READ_URL, or run on PostgreSQL with a streaming replica',
        ),
      );
  } else if (
    raw(env, 'DATABASE_READ_URL') !== undefined &&
    raw(env, 'DATABASE_READ_URL') === raw(env, 'DATABASE_URL')
  ) {
    errors.push(new ConfigError('DATABASE_READ_URL', 'must name a replica, not DATABASE_URL itself'));
  }
  if (raw(env, 'DATABASE_READ_URL') === undefined)
    for (const name of ['DATABASE_READ_POOL_SIZE', 'DATABASE_READ_MAX_LAG_SECONDS'])
      if (raw(env, name) !== undefined) errors.push(new ConfigError(name, 'needs DATABASE_READ_URL'));
  if (
    config.staffSessionMaxSeconds < config.staffSessionIdleSeconds &&
    !errors.some((e) => e.variable.startsWith('STAFF_'))
  )
    errors.push(
      new ConfigError(
        'STAFF_SESSION_MAX_SECONDS',
        `must be at least STAFF_SESSION_IDLE_SECONDS (${config.staffSessionIdleSeconds}), got ${config.staffSessionMaxSeconds}`,
      ),
    );
  for (const [name, replacement] of RETIRED_VARIABLES) {
    if (raw(env, name) !== undefined) errors.push(new ConfigError(name, `is no longer read; ${replacement}`));
  }
  if (errors.length > 0) throw ConfigError.of(errors);
  return config;
}

import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('applies the defaults of decisions.md §1', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:3000',
      assetServerUrl: 'http://localhost:3000',
      wsServerUrl: 'ws://localhost:3000/ws',
      databaseUrl: null,
      dataDir: '/srv/app/data',
      redisUrl: null,
      adminToken: null,
      metricsToken: null,
      identityProviderUrl: 'https://sessionserver.mojang.com',
      resourceDir: '/srv/app/resources',
      cdnBaseUrl: null,
      resourceLinkTtlSeconds: 3600,
      serverTokenTtlSeconds: 600,
      serverTokenRefreshGraceSeconds: 60,
      playerTokenTtlSeconds: 600,
      playerResyncIntervalSeconds: 240,
      resumeTokenTtlSeconds: 604800,
      throttleLoginLimit: 20,
      throttleLoginTtlSeconds: 60,
      throttlePlayerLoginLimit: 600,
      throttlePlayerLoginTtlSeconds: 60,
      throttleTokenSessionFailures: 30,
      throttleTokenSessionWindowSeconds: 60,
      throttleTokenServerFailures: 300,
      throttleTokenServerWindowSeconds: 3_600,
      trustProxy: false,
      chatLinesPerSecond: 5,
      chatBurst: 20,
      wsConnectionsPerServerSession: 3,
      shutdownTimeoutSeconds: 10,
      embeddedRecoverySeconds: 60,
      embeddedMaintenanceSeconds: 60,
      tlsCertFile: null,
      tlsKeyFile: null,
      logLevel: 'info',
      scoreMaxAgeHours: 24,
      throttleSignInAccountMaxFailures: 20,
      staffSessionIdleSeconds: 1800,
      staffSessionMaxSeconds: 43200,
    });
    expect([...config.scoreChecks]).toEqual([
      'fullCombo',
      'allPerfect',
      'maxCombo',
      'noteCount',
      'perfectAccuracy',
      'accuracy',
      'time',
    ]);
  });

  it('turns off the checks SCORE_CHECKS_DISABLED lists, and refuses an unknown name', () => {
    expect([...loadConfig({ SCORE_CHECKS_DISABLED: ' time, noteCount ' }).scoreChecks]).toEqual([
      'fullCombo',
      'allPerfect',
      'maxCombo',
      'perfectAccuracy',
      'accuracy',
    ]);
    expect(() => loadConfig({ SCORE_CHECKS_DISABLED: 'time,combo' })).toThrow(
      'Invalid configuration: SCORE_CHECKS_DISABLED must list check names among fullCombo, allPerfect, maxCombo, noteCount, perfectAccuracy, accuracy, time; "combo" is none of them',
    );
    expect(() => loadConfig({ SCORE_MAX_AGE_HOURS: '0' })).toThrow(
      'Invalid configuration: SCORE_MAX_AGE_HOURS must be between 1 and 87600, got 0',
    );
  });

  it('derives the advertised addresses from PUBLIC_BASE_URL', () => {
    const config = loadConfig({ PUBLIC_BASE_URL: 'https://rhythm.example.org/' });
    expect(config.publicBaseUrl).toBe('https://rhythm.example.org');
    expect(config.assetServerUrl).toBe('https://rhythm.example.org');
    expect(config.wsServerUrl).toBe('wss://rhythm.example.org/ws');
  });

  it('normalises the base addresses (scheme and host in lower case), so the WebSocket address follows', () => {
    const config = loadConfig({
      PUBLIC_BASE_URL: 'HTTPS://Rhythm.Example.org:443/net/',
      CDN_BASE_URL: 'https://CDN.example/r/',
    });
    expect(config.publicBaseUrl).toBe('https://rhythm.example.org/net');
    expect(config.wsServerUrl).toBe('wss://rhythm.example.org/net/ws');
    expect(config.cdnBaseUrl).toBe('https://cdn.example/r');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://[::1]:8080' }).wsServerUrl).toBe('ws://[::1]:8080/ws');
  });

  it('refuses one TLS file without the other, naming the missing one', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/etc/cert.pem' })).toThrow(/^Invalid configuration: TLS_KEY_FILE /);
    expect(() => loadConfig({ TLS_KEY_FILE: '/etc/key.pem' })).toThrow(/^Invalid configuration: TLS_CERT_FILE /);
  });

  it('reads SHUTDOWN_TIMEOUT_SECONDS', () => {
    expect(loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '45' }).shutdownTimeoutSeconds).toBe(45);
  });

  it('takes METRICS_TOKEN as given', () => {
    expect(loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789' }).metricsToken).toBe('scrape-token-0123456789');
  });

  it.each([
    ['false', false],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 192.168.1.7,::1', ['10.0.0.0/8', '192.168.1.7', '::1']],
    ['loopback,uniquelocal', ['loopback', 'uniquelocal']],
  ])('reads TRUST_PROXY=%s in Express trust-proxy form', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['0.0.0.0/0', 'IPv4'],
    ['0.0.0.0/1,128.0.0.0/1', 'IPv4'],
    ['10.0.0.0/1, 200.0.0.0/1', 'IPv4'],
    ['0.0.0.0/2,64.0.0.0/2,128.0.0.0/1,loopback', 'IPv4'],
    ['0.0.0.0/128.0.0.0,128.0.0.0/128.0.0.0', 'IPv4'],
    ['0/1,128.0.0.0/1', 'IPv4'],
    ['::ffff:0:0/96', 'IPv4'],
    ['::ffff:0.0.0.0/97,::ffff:128.0.0.0/97', 'IPv4'],
    ['0.0.0.0/1,::ffff:128.0.0.0/97', 'IPv4'],
    ['::/1', 'IPv4'],
    ['::/0', 'IPv4'],
    ['8000::/1,c000::/2,::/1', 'IPv4'],
    [`8000::/1,${ipv6OutsideMappedBelow8000()}`, 'IPv6'],
  ])('refuses TRUST_PROXY=%s: its ranges trust every %s address', (value, family) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
      `Invalid configuration: TRUST_PROXY must not trust every ${family} address (its ranges together cover them all, so every client could choose its own address): give a hop count or the proxies' addresses`,
    );
  });

  it.each([
    '0.0.0.0/1',
    '0.0.0.0/1,128.0.0.0/2,192.0.0.0/3,224.0.0.0/4,240.0.0.0/5,248.0.0.0/6,252.0.0.0/7,254.0.0.0/8,255.0.0.0/9',
    '0.0.0.0/1,128.0.0.0/2,192.0.0.0/3,224.0.0.0/4,240.0.0.0/5,248.0.0.0/6,252.0.0.0/7,254.0.0.0/8,255.255.255.254/31',
    '::ffff:0:0/97',
    '8000::/1',
    ipv6OutsideMappedBelow8000(),
    'loopback,linklocal,uniquelocal,255.255.255.255',
  ])('accepts TRUST_PROXY=%s, which leaves some addresses of each family untrusted', (value) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(value.split(','));
  });

  it.each([
    [undefined, true],
    ['true', true],
    ['FALSE', false],
  ])('reads MIGRATE_ON_START=%s', (value, expected) => {
    expect(loadConfig({ MIGRATE_ON_START: value }).migrateOnStart).toBe(expected);
  });

  it('reads the pooler settings, which need DATABASE_URL', () => {
    const pg = 'postgres://svc@pgbouncer:6432/rhythmc';
    expect(loadConfig({ DATABASE_URL: pg })).toMatchObject({ databasePoolMode: 'session', migrationDatabaseUrl: null });
    expect(
      loadConfig({
        DATABASE_URL: pg,
        DATABASE_POOL_MODE: 'transaction',
        MIGRATION_DATABASE_URL: 'postgresql://owner@db:5432/rhythmc',
      }),
    ).toMatchObject({ databasePoolMode: 'transaction', migrationDatabaseUrl: 'postgresql://owner@db:5432/rhythmc' });
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_POOL_MODE: 'statement' })).toThrow(
      'Invalid configuration: DATABASE_POOL_MODE must be one of session, transaction, got "statement"',
    );
    expect(() => loadConfig({ DATABASE_URL: pg, MIGRATION_DATABASE_URL: 'mysql://db/x' })).toThrow(
      'Invalid configuration: MIGRATION_DATABASE_URL must use postgres: or postgresql:, got "mysql:"',
    );
    expect(() => loadConfig({ DATABASE_POOL_MODE: 'transaction' })).toThrow(
      'Invalid configuration: DATABASE_POOL_MODE needs DATABASE_URL (PostgreSQL)',
    );
    // The default written out (the example file's line) is no pooler setting: accepted.
    expect(loadConfig({ DATABASE_POOL_MODE: 'session' }).databaseUrl).toBeNull();
    expect(() => loadConfig({ MIGRATION_DATABASE_URL: pg })).toThrow(
      'Invalid configuration: MIGRATION_DATABASE_URL needs DATABASE_URL (PostgreSQL)',
    );
  });

  it('reads the read replica settings, which need DATABASE_URL and DATABASE_READ_URL', () => {
    const pg = 'postgres://svc@primary:5432/rhythmc';
    const replica = 'postgresql://svc@replica:5432/rhythmc';
    expect(loadConfig({ DATABASE_URL: pg })).toMatchObject({
      databaseReadUrl: null,
      databaseReadPoolSize: 10,
      databaseReadMaxLagSeconds: 5,
    });
    expect(
      loadConfig({
        DATABASE_URL: pg,
        DATABASE_POOL_MODE: 'transaction',
        DATABASE_READ_URL: replica,
        DATABASE_READ_POOL_SIZE: '4',
        DATABASE_READ_MAX_LAG_SECONDS: '30',
      }),
    ).toMatchObject({ databaseReadUrl: replica, databaseReadPoolSize: 4, databaseReadMaxLagSeconds: 30 });
    expect(() => loadConfig({ DATABASE_READ_URL: replica })).toThrow(
      'Invalid configuration: DATABASE_READ_URL needs DATABASE_URL (PostgreSQL): the embedded database has no replica; unset DATABASE_READ_URL, or run on PostgreSQL with a streaming replica',
    );
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_READ_URL: pg })).toThrow(
      'Invalid configuration: DATABASE_READ_URL must name a replica, not DATABASE_URL itself',
    );
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_READ_URL: 'redis://replica:6379' })).toThrow(
      'Invalid configuration: DATABASE_READ_URL must use postgres: or postgresql:, got "redis:"',
    );
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_READ_MAX_LAG_SECONDS: '5' })).toThrow(
      'Invalid configuration: DATABASE_READ_MAX_LAG_SECONDS needs DATABASE_READ_URL',
    );
    expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_READ_POOL_SIZE: '5' })).toThrow(
      'Invalid configuration: DATABASE_READ_POOL_SIZE needs DATABASE_READ_URL',
    );
    for (const [name, value] of [
      ['DATABASE_READ_POOL_SIZE', '0'],
      ['DATABASE_READ_POOL_SIZE', '101'],
      ['DATABASE_READ_MAX_LAG_SECONDS', '0'],
      ['DATABASE_READ_MAX_LAG_SECONDS', '3601'],
      ['DATABASE_READ_MAX_LAG_SECONDS', '1.5'],
    ])
      expect(() => loadConfig({ DATABASE_URL: pg, DATABASE_READ_URL: replica, [name]: value })).toThrow(
        `Invalid configuration: ${name} must be`,
      );
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', REDIS_URL: '  ', PORT: '' }).databaseUrl).toBeNull();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PUBLIC_BASE_URL', 'not a url'],
    ['PUBLIC_BASE_URL', 'ftp://x'],
    ['WS_SERVER_URL', 'http://x/ws'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'http://x'],
    ['SERVER_TOKEN_TTL_SECONDS', '0'],
    ['PLAYER_TOKEN_TTL_SECONDS', '1.5'],
    ['THROTTLE_LOGIN_LIMIT', '-3'],
    ['LOG_LEVEL', 'loud'],
    ['ADMIN_TOKEN', 'short'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'sixteen chars or more but spaced'],
    ['METRICS_TOKEN', 'sixteen-chars-or-more-ünicode'],
    ['ADMIN_TOKEN', 'correct horse battery staple'],
    ['ADMIN_TOKEN', 'sixteen-chars-or-more-ünicode'],
    ['PUBLIC_BASE_URL', 'https://rhythm.example.org/?x=1'],
    ['PUBLIC_BASE_URL', 'https://rhythm.example.org/#top'],
    ['ASSET_SERVER_URL', 'https://files.example.org/base?'],
    ['CDN_BASE_URL', 'https://user:pass@cdn.example.org/'],
    ['WS_SERVER_URL', 'wss://rhythm.example.org/ws?token=1'],
    ['IDENTITY_PROVIDER_URL', 'https://sessionserver.example/?x'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['RESOURCE_LINK_TTL_SECONDS', '0'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '0'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '601'],
    ['THROTTLE_PLAYER_LOGIN_LIMIT', '0'],
    ['THROTTLE_PLAYER_LOGIN_TTL_SECONDS', 'x'],
    ['THROTTLE_TOKEN_SESSION_FAILURES', '0'],
    ['THROTTLE_TOKEN_SESSION_WINDOW_SECONDS', '-1'],
    ['THROTTLE_TOKEN_SERVER_FAILURES', 'x'],
    ['THROTTLE_TOKEN_SERVER_WINDOW_SECONDS', '604801'],
    // Retired: their meaning changed, so a set value stops the start instead of being ignored.
    ['THROTTLE_TOKEN_MAX_FAILURES', '5'],
    ['THROTTLE_TOKEN_LOCKOUT_SECONDS', '300'],
    ['PLAYER_RESYNC_INTERVAL_SECONDS', '0'],
    ['CHAT_LINES_PER_SECOND', '0'],
    ['CHAT_BURST', 'many'],
    ['WS_CONNECTIONS_PER_SERVER_SESSION', '0'],
    ['WS_CONNECTIONS_PER_SERVER_SESSION', '101'],
    ['TRUST_PROXY', 'true'],
    ['MIGRATE_ON_START', 'yes'],
    ['THROTTLE_ADMIN_AUTH_MAX_FAILURES', '0'],
    ['THROTTLE_ADMIN_AUTH_LOCKOUT_SECONDS', '86401'],
    ['THROTTLE_SIGN_IN_ACCOUNT_MAX_FAILURES', '0'],
    ['STAFF_SESSION_IDLE_SECONDS', '59'],
    ['STAFF_SESSION_MAX_SECONDS', '2592001'],
    ['STAFF_SESSION_MAX_SECONDS', '300'],
    ['TRUST_PROXY', '0'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'proxy.example.org'],
    ['TRUST_PROXY', 'loopback,nonsense'],
    ['WEBHOOK_CONCURRENCY_PER_WEBHOOK', '0'],
    ['WEBHOOK_CONCURRENCY_PER_WEBHOOK', '9'], // more than WEBHOOK_CONCURRENCY (8)
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('reports every invalid variable in one message', () => {
    let thrown: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        LOG_LEVEL: 'loud',
        ADMIN_TOKEN: 'short',
        REDIS_URL: 'http://cache',
        CHAT_BURST: '0',
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe('PORT, LOG_LEVEL, ADMIN_TOKEN, REDIS_URL, CHAT_BURST');
    expect((thrown as ConfigError).message).toBe(
      [
        'Invalid configuration (5 variables):',
        '  PORT must be an integer, got "eighty"',
        '  LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
        '  ADMIN_TOKEN must be at least 16 characters long',
        '  REDIS_URL must use redis: or rediss:, got "http:"',
        '  CHAT_BURST must be between 1 and 100000, got 0',
      ].join('\n'),
    );
  });
});

describe('loadConfig: webhook delivery slots', () => {
  it('gives one webhook half the slots by default, at least one, and at most all of them', () => {
    const slots = (env: Record<string, string>) => {
      const config = loadConfig(env);
      return [config.webhookConcurrency, config.webhookConcurrencyPerWebhook];
    };
    expect(slots({})).toEqual([8, 4]);
    expect(slots({ WEBHOOK_CONCURRENCY: '1' })).toEqual([1, 1]);
    expect(slots({ WEBHOOK_CONCURRENCY: '5' })).toEqual([5, 2]);
    expect(slots({ WEBHOOK_CONCURRENCY: '5', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '5' })).toEqual([5, 5]);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '5' })).toThrow(
      /WEBHOOK_CONCURRENCY_PER_WEBHOOK must be between 1 and 4, got 5/,
    );
  });
});

describe('loadConfig: the public API', () => {
  it('keeps it keyed, uncached by others and without optional fields by default', () => {
    expect(loadConfig({})).toMatchObject({
      publicApiKeyRateLimit: 1200,
      publicApiAnonymousRateLimit: 0,
      publicApiCorsOrigins: [],
      publicApiMaxAgeSeconds: 10,
      publicApiFields: new Set(),
    });
  });

  it('reads origins as a browser sends them, or * alone', () => {
    expect(
      loadConfig({ PUBLIC_API_CORS_ORIGINS: ' https://example.net , http://localhost:8080 ' }).publicApiCorsOrigins,
    ).toEqual(['https://example.net', 'http://localhost:8080']);
    expect(loadConfig({ PUBLIC_API_CORS_ORIGINS: '*' }).publicApiCorsOrigins).toEqual(['*']);
    expect(() => loadConfig({ PUBLIC_API_CORS_ORIGINS: 'https://example.net/' })).toThrow(
      'Invalid configuration: PUBLIC_API_CORS_ORIGINS must list origins like https://example.net (scheme and host, a port other than the default, nothing else); "https://example.net/" is not one (did you mean https://example.net?)',
    );
    for (const wrong of [
      'example.net',
      'https://example.net:443',
      'ftp://example.net',
      'https://Example.net',
      '*,https://a.example',
    ])
      expect(() => loadConfig({ PUBLIC_API_CORS_ORIGINS: wrong })).toThrow(
        /^Invalid configuration: PUBLIC_API_CORS_ORIGINS must /,
      );
  });

  it('turns on listed optional fields only, and refuses an unknown one', () => {
    expect([...loadConfig({ PUBLIC_API_FIELDS: 'balance' }).publicApiFields]).toEqual(['balance']);
    expect(() => loadConfig({ PUBLIC_API_FIELDS: 'balance,sessions' })).toThrow(
      'Invalid configuration: PUBLIC_API_FIELDS must list names among balance; "sessions" is none of them',
    );
    expect(() => loadConfig({ PUBLIC_API_KEY_RATE_LIMIT: '0' })).toThrow(
      'Invalid configuration: PUBLIC_API_KEY_RATE_LIMIT must be between 1 and 1000000, got 0',
    );
  });
});

describe('loadConfig: the leaderboard site', () => {
  const on = { SITE_ENABLED: 'true', PUBLIC_API_ANONYMOUS_RATE_LIMIT: '60' };

  it('is off by default, and its other variables are not read then', () => {
    expect(loadConfig({}).site).toBeNull();
    expect(loadConfig({ SITE_ENABLED: 'false', SITE_PATH: 'not a path', SITE_ACCENT_COLOR: 'red' }).site).toBeNull();
  });

  it('reads its path, name and colours, with defaults', () => {
    expect(loadConfig(on).site).toEqual({
      path: '/site',
      name: 'rhythmc',
      accentColor: '#7c5cff',
      backgroundColor: '#11121a',
    });
    expect(
      loadConfig({
        ...on,
        SITE_PATH: '/boards',
        SITE_NAME: 'Beat Network <b>',
        SITE_ACCENT_COLOR: '#FF8800',
        SITE_BACKGROUND_COLOR: '#ffffff',
      }).site,
    ).toEqual({ path: '/boards', name: 'Beat Network <b>', accentColor: '#ff8800', backgroundColor: '#ffffff' });
  });

  it('refuses a start without the anonymous tier, a bad path, a reserved path, a name too long or a colour that is not #rrggbb', () => {
    expect(() => loadConfig({ SITE_ENABLED: 'true' })).toThrow(
      'Invalid configuration: SITE_ENABLED needs PUBLIC_API_ANONYMOUS_RATE_LIMIT above 0: the site reads the public API without a key, limited per address',
    );
    expect(() => loadConfig({ ...on, SITE_ENABLED: 'yes' })).toThrow(
      'Invalid configuration: SITE_ENABLED must be true or false, got "yes"',
    );
    for (const path of ['/', 'site', '/a/b', '/Site', '/site/', '/../x'])
      expect(() => loadConfig({ ...on, SITE_PATH: path })).toThrow(
        `Invalid configuration: SITE_PATH must be one path segment of a-z, 0-9 and - like /site, got "${path}"`,
      );
    for (const path of ['/admin', '/public', '/console', '/server', '/docs'])
      expect(() => loadConfig({ ...on, SITE_PATH: path })).toThrow(
        `Invalid configuration: SITE_PATH must not be a path the service answers itself (${path})`,
      );
    expect(() => loadConfig({ ...on, SITE_NAME: 'x'.repeat(65) })).toThrow(
      'Invalid configuration: SITE_NAME must be 1-64 characters without control characters',
    );
    expect(() => loadConfig({ ...on, SITE_NAME: 'a\u0007b' })).toThrow(/SITE_NAME must be/);
    for (const colour of ['red', '#fff', '#12345g', '#123456;} body{x:y', 'url(x)'])
      expect(() => loadConfig({ ...on, SITE_ACCENT_COLOR: colour })).toThrow(
        `Invalid configuration: SITE_ACCENT_COLOR must be a colour like #3366cc, got "${colour}"`,
      );
  });
});

describe('loadConfig: retention', () => {
  it('is off for every setting unless a variable names days; off is accepted', () => {
    expect(loadConfig({}).retention).toEqual({
      days: { sessions: null, wsConnections: null, balanceHistory: null, failedPlays: null, webhookDeliveries: null },
      batchSize: 2_000,
      intervalMinutes: 60,
    });
    const config = loadConfig({
      RETENTION_SESSIONS_DAYS: '30',
      RETENTION_WS_CONNECTIONS_DAYS: 'OFF',
      RETENTION_BALANCE_HISTORY_DAYS: ' 365 ',
      RETENTION_FAILED_PLAYS_DAYS: '',
      RETENTION_WEBHOOK_DELIVERIES_DAYS: '36500',
      RETENTION_BATCH_SIZE: '5000',
      RETENTION_INTERVAL_MINUTES: '10080',
    });
    expect(config.retention).toEqual({
      days: { sessions: 30, wsConnections: null, balanceHistory: 365, failedPlays: null, webhookDeliveries: 36_500 },
      batchSize: 5_000,
      intervalMinutes: 10_080,
    });
  });

  it('refuses 0, negative, fractional, unit-suffixed and too long retentions, and batches out of range, naming each', () => {
    for (const value of ['0', '-1', '1.5', '30d', 'never', '36501'])
      expect(() => loadConfig({ RETENTION_FAILED_PLAYS_DAYS: value })).toThrow(
        `Invalid configuration: RETENTION_FAILED_PLAYS_DAYS must be a number of days from 1 to 36500, or off, got "${value}"`,
      );
    expect(() => loadConfig({ RETENTION_BATCH_SIZE: '50' })).toThrow(
      'Invalid configuration: RETENTION_BATCH_SIZE must be between 100 and 10000, got 50',
    );
    expect(() => loadConfig({ RETENTION_INTERVAL_MINUTES: '0' })).toThrow(
      'Invalid configuration: RETENTION_INTERVAL_MINUTES must be between 1 and 10080, got 0',
    );
    expect(() => loadConfig({ RETENTION_SESSIONS_DAYS: '0', RETENTION_BALANCE_HISTORY_DAYS: 'x' })).toThrow(
      'Invalid configuration (2 variables):\n  RETENTION_SESSIONS_DAYS must be a number of days from 1 to 36500, or off, got "0"' +
        '\n  RETENTION_BALANCE_HISTORY_DAYS must be a number of days from 1 to 36500, or off, got "x"',
    );
  });
});

/** CIDR ranges covering every IPv6 address below 8000:: except ::ffff:0:0/96 (the IPv4-mapped ones). */
function ipv6OutsideMappedBelow8000(): string {
  const hex = (value: bigint) => {
    const digits = value.toString(16).padStart(32, '0');
    return Array.from({ length: 8 }, (_, i) => digits.slice(i * 4, i * 4 + 4)).join(':');
  };
  const ranges: string[] = [];
  const mappedFirst = 0xffffn << 32n;
  const mappedEnd = mappedFirst + (1n << 32n);
  // Split [first, end) into the largest aligned blocks.
  const split = (first: bigint, end: bigint) => {
    while (first < end) {
      let size = 1n;
      let prefix = 128;
      while (first % (size * 2n) === 0n && first + size * 2n <= end) {
        size *= 2n;
        prefix--;
      }
      ranges.push(`${hex(first)}/${prefix}`);
      first += size;
    }
  };
  split(0n, mappedFirst);
  split(mappedEnd, 1n << 127n);
  return ranges.join(',');
}

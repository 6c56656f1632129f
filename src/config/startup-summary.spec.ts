import { loadConfig } from './app-config';
import { isLoopbackHost, openMetricsWarning, startupSummary, unsupportedNodeWarning } from './startup-summary';

describe('startupSummary', () => {
  it('says where it listens, on what, and what is on, without credentials', () => {
    const config = loadConfig(
      {
        HOST: '10.0.0.5',
        DATABASE_URL: 'postgres://rhythmc:s3cret@db.internal:5432/rhythmc',
        REDIS_URL: 'redis://:hunter2-password@cache.internal:6379/2',
        ADMIN_TOKEN: 'a'.repeat(32),
        METRICS_TOKEN: 'm'.repeat(32),
        TRUST_PROXY: 'loopback, 10.0.0.0/8',
      },
      '/srv',
    );
    expect(startupSummary(config, 3000, '1.2.3')).toBe(
      'rhythmc-backend 1.2.3: listening on http://10.0.0.5:3000; database PostgreSQL db.internal:5432/rhythmc; Redis cache.internal:6379/2; ' +
        'admin API on; /metrics needs METRICS_TOKEN; TLS off; trusted proxies: loopback, 10.0.0.0/8',
    );
  });

  it('names the read replica and its lag bound, without credentials', () => {
    const config = loadConfig(
      {
        DATABASE_URL: 'postgres://rhythmc:s3cret@db.internal:5432/rhythmc',
        DATABASE_READ_URL: 'postgres://rhythmc:s3cret@replica.internal:5432/rhythmc',
        DATABASE_READ_MAX_LAG_SECONDS: '3',
      },
      '/srv',
    );
    const summary = startupSummary(config, 3000, '1.2.3');
    expect(summary).toContain(
      '; database PostgreSQL db.internal:5432/rhythmc; reads that tolerate 3 s of lag from replica.internal:5432/rhythmc;',
    );
    expect(summary).not.toContain('s3cret');
  });

  it('names the leaderboard site and its path when it is on', () => {
    const config = loadConfig(
      { SITE_ENABLED: 'true', SITE_PATH: '/boards', PUBLIC_API_ANONYMOUS_RATE_LIMIT: '60' },
      '/srv',
    );
    expect(startupSummary(config, 3000, '0.1.0')).toContain(
      '; admin API off (no ADMIN_TOKEN); leaderboard site at /boards; /metrics open;',
    );
  });

  it('names the defaults: embedded database, no Redis, admin API off, /metrics open, no proxy', () => {
    const config = loadConfig({}, '/srv');
    expect(startupSummary(config, 41234, '0.1.0')).toBe(
      'rhythmc-backend 0.1.0: listening on http://0.0.0.0:41234; database embedded in /srv/data; no Redis (events and limits in this process); ' +
        'admin API off (no ADMIN_TOKEN); /metrics open; TLS off; trusted proxies: none',
    );
    expect(startupSummary(loadConfig({ HOST: '::', TRUST_PROXY: '1' }, '/srv'), 3000, '0.1.0')).toContain(
      'listening on http://[::]:3000;',
    );
    expect(startupSummary(loadConfig({ TRUST_PROXY: '2' }, '/srv'), 3000, '0.1.0')).toMatch(/trusted proxies: 2 hops$/);
  });
});

describe('openMetricsWarning', () => {
  it('warns when /metrics is open on an address other machines reach', () => {
    expect(openMetricsWarning(loadConfig({}), 3000)).toBe(
      '/metrics is open to anyone who reaches 0.0.0.0:3000: set METRICS_TOKEN, or keep the port inside the private network',
    );
    expect(openMetricsWarning(loadConfig({ HOST: '192.168.1.10' }), 8080)).toMatch(
      /^\/metrics is open to anyone who reaches 192\.168\.1\.10:8080/,
    );
  });

  it('stays quiet with METRICS_TOKEN or on loopback', () => {
    expect(openMetricsWarning(loadConfig({ METRICS_TOKEN: 'm'.repeat(32) }), 3000)).toBeNull();
    for (const host of ['127.0.0.1', '127.0.1.1', '::1', 'localhost'])
      expect(openMetricsWarning(loadConfig({ HOST: host }), 3000)).toBeNull();
  });

  it('knows loopback addresses', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('::')).toBe(false);
  });
});

describe('unsupportedNodeWarning', () => {
  it('warns below Node.js 24 and is quiet from 24 on', () => {
    expect(unsupportedNodeWarning('v20.20.2')).toBe(
      'Node.js v20.20.2 is older than the Node.js 24 LTS this service is built and tested on: upgrade (package.json engines)',
    );
    expect(unsupportedNodeWarning('v22.23.3')).toMatch(/^Node\.js v22\.23\.3 is older/);
    expect(unsupportedNodeWarning('v24.21.0')).toBeNull();
    expect(unsupportedNodeWarning('v26.1.0')).toBeNull();
  });
});

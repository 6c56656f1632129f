import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestApp, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/** Metric names a PromQL expression reads: this service's (rhythmc_), Node's (process_, nodejs_) and Prometheus's own `up`. */
function metricNames(expr: string): string[] {
  // Label values ("…") and label matchers ({…}) name no metric.
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}');
  return [...bare.matchAll(/\b((?:rhythmc|process|nodejs)_[a-zA-Z0-9_]+|up)\b/g)].map((match) => match[1]);
}

/** The sample names a Prometheus scrape of the exposition can hold: every TYPE, with a histogram's and summary's series. */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

describe('Monitoring files (deploy/)', () => {
  let app: TestApp;
  let exported: Set<string>;

  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'rhythmc-dashboard.json'), 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ definition?: string }> };
  };
  const rules = YAML.parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'rhythmc-alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const dashboardQueries = [
    ...dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
    ),
    ...dashboard.templating.list.map((variable) => ({
      where: 'a dashboard variable',
      expr: variable.definition ?? '',
    })),
  ];
  const alertQueries = rules.groups.flatMap((group) =>
    group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  );

  beforeAll(async () => {
    app = await startTestApp();
    const response = await app.http.get('/metrics', { token: null });
    expect(response.status).toBe(200);
    exported = exportedNames(response.text);
  });
  afterAll(async () => {
    await app?.close();
  });

  /**
   * Names read but not exported; `up` is Prometheus's; rhythmc_redis_up exists only with
   * REDIS_URL, the read replica's metrics only with DATABASE_READ_URL.
   */
  function missing(queries: Array<{ where: string; expr: string }>): string[] {
    const optional = new Set([
      'up',
      ...(app.config.redisUrl === null ? ['rhythmc_redis_up'] : []),
      ...(app.config.databaseReadUrl === null
        ? ['rhythmc_db_read_replica_in_use', 'rhythmc_db_read_replica_lag_seconds', 'rhythmc_db_lagged_reads_total']
        : []),
    ]);
    return queries.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name) && !optional.has(name))
        .map((name) => `${where}: ${name}`),
    );
  }

  it('finds the metric names of a query, and knows a typo from an exported name', () => {
    expect(
      metricNames(
        'sum by (le, route) (rate(rhythmc_http_request_duration_seconds_bucket{route=~"/player/upload|rhythmc_x"}[5m]))',
      ),
    ).toEqual(['rhythmc_http_request_duration_seconds_bucket']);
    expect(metricNames('up{job="rhythmc"} == 1 unless on(instance) rhythmc_server_sessions_live')).toEqual([
      'up',
      'rhythmc_server_sessions_live',
    ]);
    expect(exported.has('rhythmc_http_request_duration_seconds_bucket')).toBe(true);
    expect(missing([{ where: 'a typo', expr: 'rate(rhythmc_htp_requests_total[5m])' }])).toEqual([
      'a typo: rhythmc_htp_requests_total',
    ]);
  });

  it('has a dashboard whose every query reads only metrics the service exports', () => {
    expect(dashboardQueries.length).toBeGreaterThan(15);
    expect(dashboardQueries.every(({ expr }) => metricNames(expr).length > 0)).toBe(true);
    expect(missing(dashboardQueries)).toEqual([]);
  });

  it("has alert rules that read only metrics the service exports (and Prometheus's up)", () => {
    expect(alertQueries.map((query) => query.where)).toContain('alert RhythmcEventLoopStalled');
    expect(missing(alertQueries)).toEqual([]);
  });
});

// Checks the monitoring files with Prometheus's own parser: `promtool check rules` on the alert
// rules, and on every query of the Grafana dashboard (written into a temporary file of recording
// rules, Grafana's variables replaced by plain values). Which metrics they read is checked against
// the service's /metrics by test/e2e/monitoring-files.e2e-spec.ts.
// Usage: node scripts/check-monitoring.js   (npm run check:monitoring; needs promtool on PATH:
// Debian's `prometheus` package)
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const YAML = require('yaml');

const root = join(__dirname, '..');
const RULES = join(root, 'deploy', 'prometheus', 'rhythmc-alerts.yml');
const DASHBOARD = join(root, 'deploy', 'grafana', 'rhythmc-dashboard.json');

function promtool(file) {
  const result = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
  if (result.error) throw new Error(`promtool: ${result.error.message} (install Debian's prometheus package)`);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.status === 0;
}

/** Every query of the dashboard, in panel order. */
function dashboardQueries() {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );
}

const work = mkdtempSync(join(tmpdir(), 'rhythmc-monitoring-'));
let ok = false;
try {
  ok = promtool(RULES);
  const queries = dashboardQueries();
  const rules = queries.map(({ expr }, i) => ({
    record: `dashboard:query_${i}`,
    expr: expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.+'),
  }));
  const file = join(work, 'dashboard-queries.yml');
  writeFileSync(file, YAML.stringify({ groups: [{ name: 'dashboard', rules }] }));
  process.stdout.write(`Dashboard: ${queries.length} queries\n`);
  ok = promtool(file) && ok;
} finally {
  rmSync(work, { recursive: true, force: true });
}
// After the finally: process.exit() inside the try skipped it, and every run left its folder in /tmp.
process.exit(ok ? 0 : 1);

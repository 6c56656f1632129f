// `prepare` (after `npm install` / `npm ci`): builds dist/ when the build tools are installed.
// `npm ci --omit=dev` (a production install on an already built tree) has none: it keeps dist/.
const { existsSync } = require('node:fs');
const { spawnSync } = require('node:child_process');

if (!existsSync(require('node:path').join(__dirname, '..', 'node_modules', '@nestjs', 'cli'))) {
  process.stdout.write(
    'prepare: no dev dependencies (npm ci --omit=dev), so no build; `npm start` runs the existing dist/\n',
  );
  process.exit(0);
}
const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);

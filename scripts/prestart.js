// `prestart`: builds dist/ when it is missing; without the build tools, says what to do instead
// of failing with "nest: not found".
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const root = join(__dirname, '..');
if (existsSync(join(root, 'dist', 'src', 'main.js'))) process.exit(0);
if (!existsSync(join(root, 'node_modules', '@nestjs', 'cli'))) {
  process.stderr.write(
    'dist/ is missing and the build tools are not installed (npm ci --omit=dev).\n' +
      'Build first: `npm ci && npm run build`, then `npm ci --omit=dev` keeps dist/ (or use the Dockerfile).\n',
  );
  process.exit(1);
}
const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);

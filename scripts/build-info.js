// After `nest build`: dist/build-info.json with the commit the build was made from, for the
// rhythmc_build_info metric and the start-up line. The commit comes from SOURCE_COMMIT (a Docker
// build has no .git: `docker build --build-arg SOURCE_COMMIT=$(git rev-parse HEAD) .`), else git.
const { execFileSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

function commit() {
  if (process.env.SOURCE_COMMIT) return process.env.SOURCE_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: join(__dirname, '..'),
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

writeFileSync(
  join(__dirname, '..', 'dist', 'build-info.json'),
  `${JSON.stringify({ commit: commit(), builtAt: new Date().toISOString() })}\n`,
);

/**
 * The fast tier (`npm run test:fast`, README "Tests"): the unit specs but the three exhaustive ones
 * (random walks over the rank data structures, scrypt at its production cost), and one end-to-end
 * walk through every module's happy path on one app. For the edit-test loop; `npm test` and CI
 * run everything.
 */
const base = require('./jest.config.js');
const [unit, e2e] = base.projects;

/** Unit specs left to the full suite: each takes longer alone than the rest of the tier. */
const EXHAUSTIVE = ['rank-key-set', 'order-statistic-set', 'password-hasher'];

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  projects: [
    { ...unit, testPathIgnorePatterns: EXHAUSTIVE.map((name) => `/src/.*/${name}\\.spec\\.ts$`) },
    { ...e2e, testMatch: ['<rootDir>/test/e2e/happy-path.e2e-spec.ts'] },
  ],
};

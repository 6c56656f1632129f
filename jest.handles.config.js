/**
 * `npm run test:handles`: the whole suite with test/setup/handle-probe-environment.js, which
 * writes what each test file left keeping the process alive to test-handles.txt (README "Tests").
 */
const base = require('./jest.config.js');

const probe = '<rootDir>/test/setup/handle-probe-environment.js';

/** @type {import('jest').Config} */
module.exports = { ...base, projects: base.projects.map((project) => ({ ...project, testEnvironment: probe })) };

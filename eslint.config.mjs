// Type-aware lint: the rules that catch real bugs in async Nest code (floating promises,
// unsafe any) run with type information from tsconfig.json.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const NO_REALTIME = { group: ['**/realtime/*'], message: 'Nothing depends on the realtime module: publish on the event bus (src/common/events).' };
const NO_FOREIGN_REPOSITORY = {
  group: ['../*/*.repository', '../../*/*.repository'],
  message: "Call the other module's service; its repository is its own.",
};
const FOUNDATION_KNOWS_NO_FEATURE = {
  group: ['**/auth/*', '**/server/*', '**/player/*', '**/catalog/*', '**/economy/*', '**/upload/*', '**/realtime/*', '**/resources/*', '**/observability/*', '**/health/*', '**/openapi/*'],
  message: 'common, config and database know no feature module: the features depend on them, never the reverse.',
};
const CATALOG_IS_UPSTREAM = { group: ['**/upload/*', '**/economy/*'], message: 'Upload and economy call the catalog, not the reverse.' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', '.test-tmp/**', 'bench/.out/**', 'eslint.config.mjs', 'jest.config.js', '**/*.worker.js'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-console': 'error',
    },
  },
  // The web console (console/, docs/operations.md "Web console"): browser code, typed by console/tsconfig.json.
  {
    files: ['console/**/*.ts', 'console/**/*.tsx', 'console/**/*.mts'],
    languageOptions: { globals: globals.browser },
  },
  // The npm lifecycle scripts are plain CommonJS run by node before anything is built: no types.
  {
    files: ['scripts/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { sourceType: 'commonjs', globals: globals.node, parserOptions: { projectService: false, project: null } },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  // Module boundaries (docs/architecture.md): nothing depends on the realtime module but the app's
  // wiring and observability (which reads its connection count); a service, controller or guard reaches another module through that module's service,
  // never its repository (repositories may share SQL fragments); the catalog knows neither uploads
  // nor economy; common, config and database know no feature module. ESLint applies one no-restricted-imports per file, so each group lists all it needs.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/realtime/**', 'src/observability/**', 'src/**/*.repository.ts', 'src/app.module.ts', 'src/app.factory.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_REALTIME, NO_FOREIGN_REPOSITORY] }] },
  },
  { files: ['src/**/*.repository.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [NO_REALTIME] }] } },
  { files: ['src/realtime/**/*.ts', 'src/observability/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [NO_FOREIGN_REPOSITORY] }] } },
  {
    files: ['src/common/**/*.ts', 'src/config/**/*.ts', 'src/database/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_REALTIME, NO_FOREIGN_REPOSITORY, FOUNDATION_KNOWS_NO_FEATURE] }] },
  },
  {
    files: ['src/catalog/**/*.ts'],
    ignores: ['src/**/*.repository.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_REALTIME, NO_FOREIGN_REPOSITORY, CATALOG_IS_UPSTREAM] }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // Response bodies in tests are asserted whole with toEqual; typing each would add nothing.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);

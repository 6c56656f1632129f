// Type-aware lint: the rules that catch real bugs in async Nest code (floating promises,
// unsafe any) run with type information from tsconfig.json.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      '.test-tmp/**',
      'bench/.out/**',
      'eslint.config.mjs',
      'jest.config.js',
      'jest.fast.config.js',
      'jest.handles.config.js',
      'test/setup/handle-probe-environment.js',
      '**/*.worker.js',
    ],
  },
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
  // The service's regular expressions (docs/decisions.md "Plugin input", linear time): the regexp
  // plugin's recommended set on everything under src/, with super-linear backtracking reported
  // when it is only potential and quadratic moves (an unanchored search) reported too.
  {
    files: ['src/**/*.ts'],
    ...regexp.configs.recommended,
    rules: {
      ...regexp.configs.recommended.rules,
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignoreSticky: false, ignorePartial: false }],
      // Style only, and against the code's use: the explicit classes are the ones the OpenAPI
      // patterns and the error messages spell out (`A-Z, a-z, 0-9 and _`), and with the `u` flag
      // `i` would also let U+212A (Kelvin) and U+017F (long s) through.
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
    },
  },
  // The web console (console/, docs/operations.md "Web console"): browser code, typed by console/tsconfig.json.
  {
    files: [
      'console/**/*.ts',
      'console/**/*.tsx',
      'console/**/*.mts',
      'site/**/*.ts',
      'site/**/*.tsx',
      'site/**/*.mts',
    ],
    languageOptions: { globals: globals.browser },
  },
  // The npm lifecycle scripts and the dependency-cruiser config are plain CommonJS run by node: no types.
  // Imports between modules are checked by dependency-cruiser (.dependency-cruiser.js, npm run check:deps), not here.
  {
    files: ['scripts/**/*.js', '.dependency-cruiser.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'commonjs',
      globals: globals.node,
      parserOptions: { projectService: false, project: null },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
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

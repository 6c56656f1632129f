'use strict';
/*
 * `node -r ./scripts/ts-register.js src/main.ts`: runs the project's TypeScript in a child
 * process, as `ts-node/register/transpile-only` does (TypeScript's transpileModule with
 * tsconfig.json's options, no type check), with the output kept on disk under
 * .test-tmp/transpiled/, keyed by the file's path and text, TypeScript's version and tsconfig.json.
 * The e2e tests start the service, its CLIs and the simulator as processes hundreds of times a run,
 * and every test app starts the webhook delivery worker thread from its source;
 * ts-node loaded TypeScript and transpiled the ~400 files of the service again in every one of them
 * (3–10 s a start on a loaded 2-core machine). With the cache, TypeScript is loaded only on a miss.
 * The service itself never needs it: the built service runs dist/.
 * Plain JavaScript, so that it needs no transpiling itself. `rm -rf .test-tmp` clears the cache.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const CACHE = join(ROOT, '.test-tmp', 'transpiled');
const TSCONFIG = join(ROOT, 'tsconfig.json');

const tsconfigText = readFileSync(TSCONFIG, 'utf8');
const typescriptVersion = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version;
const optionsKey = createHash('sha256').update(typescriptVersion).update('\0').update(tsconfigText).digest('hex');

let compile = null;
/** TypeScript and the compiler options of tsconfig.json, loaded at the first cache miss. */
function compiler() {
  if (compile !== null) return compile;
  const ts = require('typescript');
  const { config, error } = ts.readConfigFile(TSCONFIG, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const compilerOptions = {
    ...options,
    sourceMap: false,
    inlineSourceMap: true,
    inlineSources: false,
    declaration: false,
    noEmit: false,
  };
  compile = (source, fileName) => ts.transpileModule(source, { compilerOptions, fileName }).outputText;
  return compile;
}

mkdirSync(CACHE, { recursive: true });
// Stack traces point at the .ts lines (the inline source maps).
process.setSourceMapsEnabled(true);

require.extensions['.ts'] = function registerTs(module, fileName) {
  const source = readFileSync(fileName, 'utf8');
  const key = createHash('sha256').update(optionsKey).update(fileName).update('\0').update(source).digest('hex');
  const cached = join(CACHE, `${key}.js`);
  let output;
  try {
    output = readFileSync(cached, 'utf8');
  } catch {
    output = compiler()(source, fileName);
    // Written under a name of its own, then renamed: processes starting at once never read half a file.
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, output);
    renameSync(partial, cached);
  }
  module._compile(output, fileName);
};

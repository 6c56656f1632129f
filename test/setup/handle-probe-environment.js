/**
 * `npm run test:handles`: Jest's node environment that reports, per test file, the timers and
 * sockets still keeping the process alive 300 ms after the file ended, with the stack that made
 * each (async_hooks). A worker Jest says "failed to exit gracefully" has one of these; this names
 * it (issue #47 item 7 found ioredis's disconnect timer and an unread fetch body with it).
 * Written to test-handles.txt at the repository root; an empty file means none.
 */
const { TestEnvironment } = require('jest-environment-node');
const { appendFileSync } = require('node:fs');
const { createHook } = require('node:async_hooks');
const { join } = require('node:path');

const TYPES = new Set(['Timeout', 'TCPWRAP', 'TCPCONNECTWRAP', 'PIPEWRAP', 'TCPSERVERWRAP']);
const live = new Map();
const hook = createHook({
  init(id, type, _trigger, resource) {
    if (TYPES.has(type)) live.set(id, { type, resource, stack: new Error().stack.split('\n').slice(3, 20) });
  },
  destroy(id) {
    live.delete(id);
  },
});

class HandleProbeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = context.testPath;
    this.report = join(config.globalConfig.rootDir, 'test-handles.txt');
  }

  async setup() {
    await super.setup();
    live.clear();
    hook.enable();
  }

  async teardown() {
    hook.disable();
    await new Promise((resolve) => setTimeout(resolve, 300).unref());
    for (const { type, resource, stack } of live.values()) {
      const held = typeof resource.hasRef !== 'function' || resource.hasRef();
      const closed = resource.destroyed === true || resource._destroyed === true;
      if (!held || closed) continue;
      const own = stack.filter((line) => !/node:internal|node_modules\/jest|handle-probe/.test(line));
      appendFileSync(this.report, `${this.file}: ${type}\n${own.join('\n')}\n\n`);
    }
    live.clear();
    await super.teardown();
  }
}

module.exports = HandleProbeEnvironment;

// First, as in src/main.ts: SIGTERM/SIGINT are caught while the modules below load.
import { stopSignals } from '../../src/common/lifecycle/stop-signals';
import './signals-caught';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { startUntilSignalled } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';

/**
 * The service in a child process, started and stopped by the same calls as src/main.ts
 * (stopSignals first → loadConfig → startUntilSignalled: a signal during start-up closes what
 * started and exits 0). It reports its port and database URL to the parent over IPC.
 * Run with `node -r scripts/ts-register.js` (see test/support/service-child.ts).
 */
async function run(): Promise<void> {
  const service = await startUntilSignalled(loadConfig(), stopSignals, new Logger('Main'));
  if (service === null) process.exit(0);
  process.send?.({ port: service.port, databaseUrl: service.databaseUrl });
  // A test's fault: a promise rejected that nothing handles (the process's unhandledRejection path).
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'reject-unhandled') void Promise.reject(new Error('a rejection nobody handles (test)'));
  });
}

run().catch((error: unknown) => {
  process.stderr.write(
    `service process failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { RunningService, startService } from '../../src/app.factory';
import { exitOnFatal, stopOnSignals } from '../../src/common/lifecycle/shutdown-signals';
import { loadConfig } from '../../src/config/app-config';

/**
 * The service in a child process, started and stopped by the same calls as src/main.ts
 * (loadConfig → startService with exitOnFatal → stopOnSignals). It reports its port and database
 * URL to the parent over IPC.
 * Run with `node -r ts-node/register/transpile-only` (see test/support/service-child.ts).
 */
async function run(): Promise<void> {
  const logger = new Logger('Main');
  let started: RunningService | null = null;
  const service = await startService(loadConfig(), { onFatal: exitOnFatal(() => started, logger) });
  started = service;
  stopOnSignals(service, logger);
  process.send?.({ port: service.port, databaseUrl: service.databaseUrl });
}

run().catch((error: unknown) => {
  process.stderr.write(
    `service process failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { startService } from '../../src/app.factory';
import { stopOnSignals } from '../../src/common/lifecycle/shutdown-signals';
import { loadConfig } from '../../src/config/app-config';

/**
 * The service in a child process, started and stopped by the same calls as src/main.ts
 * (loadConfig → startService → stopOnSignals). It reports its port to the parent over IPC.
 * Run with `node -r ts-node/register/transpile-only` (see test/support/service-child.ts).
 */
async function run(): Promise<void> {
  const service = await startService(loadConfig());
  stopOnSignals(service, new Logger('Main'));
  process.send?.({ port: service.port });
}

run().catch((error: unknown) => {
  process.stderr.write(
    `service process failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

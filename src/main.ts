// First: SIGTERM/SIGINT are caught from here on, also while the modules below load.
import { stopSignals } from './common/lifecycle/stop-signals';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { startUntilSignalled } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';
import { packageVersion } from './config/package-version';
import { openMetricsWarning, startupSummary, unsupportedNodeWarning } from './config/startup-summary';

async function main(): Promise<void> {
  const logger = new Logger('Main');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  // A signal during start-up: what had started is closed, and the stop is a clean one (exit 0).
  const service = await startUntilSignalled(config, stopSignals, logger);
  if (service === null) process.exit(0);
  logger.log(startupSummary(config, service.port, packageVersion()));
  for (const warning of [openMetricsWarning(config, service.port), unsupportedNodeWarning(process.version)]) {
    if (warning !== null) logger.warn(warning);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `rhythmc-backend failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

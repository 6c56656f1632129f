import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { RunningService, startService } from './app.factory';
import { exitOnFatal, stopOnSignals } from './common/lifecycle/shutdown-signals';
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

  let started: RunningService | null = null;
  const service = await startService(config, { onFatal: exitOnFatal(() => started, logger) });
  started = service;
  logger.log(startupSummary(config, service.port, packageVersion()));
  for (const warning of [openMetricsWarning(config, service.port), unsupportedNodeWarning(process.version)]) {
    if (warning !== null) logger.warn(warning);
  }

  stopOnSignals(service, logger);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `rhythmc-backend failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});

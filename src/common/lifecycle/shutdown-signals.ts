import type { LoggerService } from '@nestjs/common';

/** What a signal stops: the started service (RunningService of app.factory) or anything that closes the same way. */
export interface Stoppable {
  close(): Promise<void>;
}

/**
 * SIGTERM/SIGINT stop the service gracefully (RunningService.close: HTTP drain, WebSockets 1001,
 * then database and Redis) and exit 0, or 1 when the stop failed. A second signal during the stop
 * exits at once with 130/143: the operator insists.
 */
export function stopOnSignals(service: Stoppable, logger: LoggerService): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} received again, exiting without waiting`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    logger.log(`${signal} received, shutting down`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(`Shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

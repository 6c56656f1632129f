import { StopSignals } from './shutdown-signals';

/**
 * The process's SIGTERM/SIGINT handling, installed when this module loads. src/main.ts imports it
 * first, so the signals are caught while the rest of the service's modules load (a second or more).
 */
export const stopSignals = new StopSignals().install();

import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | null = null;

/**
 * Node's process metrics (CPU, memory, event loop lag, GC, handles), collected once per process.
 * They describe the process, not an app, and prom-client cannot stop collecting them: its GC
 * observer and event-loop monitor live as long as the process. One registry per process keeps
 * the tests, which start many apps in one process, from piling up observers.
 */
export function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

import { createHistogram } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

let processRegistry: Registry | null = null;

/** How often the event-loop monitor's timer runs, ms: blocks this long and longer are seen whole. */
export const EVENT_LOOP_RESOLUTION_MS = 2;

/**
 * `rhythmc_event_loop_delay_seconds{stat}`: how late the event loop ran a timer, since the
 * previous scrape (p50, p99, max). A timer every EVENT_LOOP_RESOLUTION_MS records the interval
 * since its previous run into a histogram, so the resolution is taken off: an idle loop reads 0,
 * not the resolution (prom-client's `nodejs_eventloop_lag_*` keep it, 10 ms).
 *
 * Not perf_hooks' monitorEventLoopDelay: its reset() also forgets the time of the timer's previous
 * run, so the first interval after a scrape was never recorded, and a block that began within a
 * resolution of a scrape was missing from the next one. Here the previous run's time is this
 * function's own; reset() empties the histogram only.
 */
function eventLoopDelayGauge(registry: Registry): void {
  const histogram = createHistogram();
  let previous = process.hrtime.bigint();
  setInterval(() => {
    const now = process.hrtime.bigint();
    histogram.record(now - previous);
    previous = now;
  }, EVENT_LOOP_RESOLUTION_MS).unref();
  const delay = (nanoseconds: number) => Math.max(0, nanoseconds / 1e9 - EVENT_LOOP_RESOLUTION_MS / 1000);
  new Gauge({
    name: 'rhythmc_event_loop_delay_seconds',
    help: `Event-loop delay since the previous scrape (a ${EVENT_LOOP_RESOLUTION_MS} ms timer, its interval taken off), by stat: p50, p99, max.`,
    labelNames: ['stat'] as const,
    registers: [registry],
    collect() {
      // No sample yet (a scrape right after the previous one): nothing was late.
      const sampled = histogram.count > 0;
      this.set({ stat: 'p50' }, sampled ? delay(histogram.percentile(50)) : 0);
      this.set({ stat: 'p99' }, sampled ? delay(histogram.percentile(99)) : 0);
      this.set({ stat: 'max' }, sampled ? delay(histogram.max) : 0);
      histogram.reset();
    },
  });
}

/**
 * Node's process metrics (CPU, memory, event loop lag, GC, handles) and the event-loop delay,
 * collected once per process. They describe the process, not an app, and prom-client cannot stop
 * collecting them: its GC observer and event-loop monitor live as long as the process. One
 * registry per process keeps the tests, which start many apps in one process, from piling up
 * observers.
 */
export function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    eventLoopDelayGauge(processRegistry);
  }
  return processRegistry;
}

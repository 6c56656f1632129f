import { createHistogram } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

let processRegistry: Registry | null = null;

/** How often the event-loop monitor's timer runs, ms: blocks this long and longer are seen whole. */
export const EVENT_LOOP_RESOLUTION_MS = 2;

/**
 * The sampler behind `rhythmc_event_loop_delay_seconds`: a timer every EVENT_LOOP_RESOLUTION_MS
 * records the interval since its previous run into a histogram. It runs while at least one app of
 * the process uses it (sampleEventLoop), so the tests, which start and close many apps in one
 * process, leave no timer behind.
 *
 * Not perf_hooks' monitorEventLoopDelay: its reset() also forgets the time of the timer's previous
 * run, so the first interval after a scrape was never recorded, and a block that began within a
 * resolution of a scrape was missing from the next one. Here the previous run's time is the
 * sampler's own; reset() empties the histogram only.
 */
const eventLoop = {
  histogram: createHistogram(),
  previous: 0n,
  timer: null as NodeJS.Timeout | null,
  users: 0,
};

/** Starts sampling the event-loop delay (if no app of the process does yet); the returned function stops this use. */
export function sampleEventLoop(): () => void {
  if (eventLoop.users++ === 0) {
    eventLoop.previous = process.hrtime.bigint();
    eventLoop.timer = setInterval(() => {
      const now = process.hrtime.bigint();
      eventLoop.histogram.record(now - eventLoop.previous);
      eventLoop.previous = now;
    }, EVENT_LOOP_RESOLUTION_MS).unref();
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--eventLoop.users > 0) return;
    if (eventLoop.timer !== null) clearInterval(eventLoop.timer);
    eventLoop.timer = null;
    eventLoop.histogram.reset();
  };
}

/**
 * `rhythmc_event_loop_delay_seconds{stat}`: how late the event loop ran the sampler's timer, since
 * the previous scrape (p50, p99, max). The histogram holds whole intervals between two runs, so the
 * resolution is taken off: an idle loop reads 0, not the resolution (prom-client's
 * `nodejs_eventloop_lag_*` keep it, 10 ms).
 */
function eventLoopDelayGauge(registry: Registry): void {
  const { histogram } = eventLoop;
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

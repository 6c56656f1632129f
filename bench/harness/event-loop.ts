/**
 * The event-loop delay of a running service, from its own /metrics:
 * `rhythmc_event_loop_delay_seconds{stat}` (a 2 ms timer into a perf_hooks histogram, the
 * timer's interval taken off), over the window since the previous scrape. Scrape once before a measured
 * window (to start it) and once after (to read it).
 */
import { Agent } from 'node:http';
import { send } from './load';

export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The services a benchmark starts inherit its environment (bench/harness/process.ts), so with
 * METRICS_TOKEN set there their /metrics wants that token (trimmed, as the service reads it).
 */
const inheritedMetricsToken = (): string | null => process.env.METRICS_TOKEN?.trim() || null;

/**
 * A new connection per scrape. A kept-alive one the service has closed as idle fails the request
 * that reuses it (the simulator's "stale kept-alive connection"), scrapes come tens of seconds
 * apart, and a failed scrape cannot just be sent again: the first may have reset the window.
 */
const scrapeAgent = new Agent({ keepAlive: false });

/** The service's /metrics text (a scrape: it also ends the event-loop window). */
export async function scrapeMetrics(
  baseUrl: string,
  metricsToken: string | null = inheritedMetricsToken(),
): Promise<string> {
  const metrics = await send(scrapeAgent, baseUrl, {
    method: 'GET',
    path: '/metrics',
    headers: metricsToken === null ? {} : { Authorization: `Bearer ${metricsToken}` },
  });
  if (metrics.status !== 200) throw new Error(`GET /metrics answered ${metrics.status}`);
  return metrics.text;
}

/** The value of the sample `series` (the name with its labels as exposed, e.g. `x{a="b"}`) in a scrape; NaN when absent. */
export function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ').pop()) : NaN;
}

export async function eventLoopDelay(
  baseUrl: string,
  metricsToken: string | null = inheritedMetricsToken(),
): Promise<EventLoopDelay> {
  const text = await scrapeMetrics(baseUrl, metricsToken);
  const stat = (name: string) => metricValue(text, `rhythmc_event_loop_delay_seconds{stat="${name}"}`) * 1000;
  return { p50Ms: stat('p50'), p99Ms: stat('p99'), maxMs: stat('max') };
}

/** eventLoopDelay of several instances, scraped together: their windows start and end at the same moment. */
export function eventLoopDelays(
  baseUrls: string[],
  metricsToken: string | null = inheritedMetricsToken(),
): Promise<EventLoopDelay[]> {
  return Promise.all(baseUrls.map((baseUrl) => eventLoopDelay(baseUrl, metricsToken)));
}

/** Per instance, in instance order: `p99 1.2 / 0.8 ms (max 3.1 / 2.0 ms)`. */
export function formatEventLoop(delays: EventLoopDelay[]): string {
  return `p99 ${delays.map((d) => d.p99Ms.toFixed(1)).join(' / ')} ms (max ${delays.map((d) => d.maxMs.toFixed(1)).join(' / ')} ms)`;
}

/**
 * How many observations a histogram of a scrape holds over the series whose line passes `series`,
 * and how many of them are above `limitSeconds` (one of the histogram's bucket bounds, else `over`
 * is NaN). The difference of two scrapes is a window's.
 */
export function histogramCounts(
  text: string,
  metric: string,
  series: (line: string) => boolean,
  limitSeconds: number,
): { count: number; over: number } {
  let count = 0;
  let within = 0;
  let bound = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_`) || !series(line)) continue;
    if (line.startsWith(`${metric}_count`)) count += Number(line.split(' ').pop());
    else if (line.startsWith(`${metric}_bucket`) && line.includes(`le="${limitSeconds}"`)) {
      within += Number(line.split(' ').pop());
      bound = true;
    }
  }
  return { count, over: bound || count === 0 ? count - within : NaN };
}

/** Answered POST calls of one route (status 200) in the service's latency histogram: histogramCounts. */
export const routeLatencyCounts = (text: string, route: string, limitSeconds: number) =>
  histogramCounts(
    text,
    'rhythmc_http_request_duration_seconds',
    (line) => line.includes(`route="${route}"`) && line.includes('status="200"') && line.includes('method="POST"'),
    limitSeconds,
  );

/** An upload phase's observations (`rhythmc_upload_phase_seconds`, phase store or rank): histogramCounts. */
export const uploadPhaseCounts = (text: string, phase: 'store' | 'rank', limitSeconds: number) =>
  histogramCounts(text, 'rhythmc_upload_phase_seconds', (line) => line.includes(`phase="${phase}"`), limitSeconds);

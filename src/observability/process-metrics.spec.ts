import type { Gauge } from 'prom-client';
import { processMetrics, sampleEventLoop } from './process-metrics';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds the event loop: no timer runs meanwhile. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/** The gauge's stats, collected as a scrape does (which starts a new window). */
async function scrape(): Promise<Record<string, number>> {
  const gauge = processMetrics().getSingleMetric('rhythmc_event_loop_delay_seconds') as Gauge;
  const { values } = await gauge.get();
  return Object.fromEntries(values.map(({ labels, value }) => [String(labels.stat), value]));
}

describe('rhythmc_event_loop_delay_seconds', () => {
  it('records a block that begins right after a scrape', async () => {
    const stop = sampleEventLoop();
    try {
      await sleep(20);
      await scrape();
      block(100);
      await sleep(20);
      const after = await scrape();
      expect(after.max).toBeGreaterThanOrEqual(0.095);
      expect(after.max).toBeLessThan(1);
      expect(after.p50).toBeLessThanOrEqual(after.p99);
      expect(after.p99).toBeLessThanOrEqual(after.max);
    } finally {
      stop();
    }
  });

  it('samples while one user is left, and stops with the last one', async () => {
    const first = sampleEventLoop();
    const second = sampleEventLoop();
    first();
    first(); // a second stop of the same use changes nothing
    await sleep(20);
    await scrape();
    block(60);
    await sleep(20);
    expect((await scrape()).max).toBeGreaterThanOrEqual(0.055);

    second();
    await scrape();
    block(60);
    await sleep(20);
    expect(await scrape()).toEqual({ p50: 0, p99: 0, max: 0 });
  });
});

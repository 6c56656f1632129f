/**
 * Two parts of a public read's CPU measured alone, in one process, before/after (issue #43), since
 * a whole-service run cannot resolve a few tens of µs on a shared machine at load 20+:
 *   validation  the query pipe on `?limit=10` for LeaderboardQueryDto: validated every call (the
 *               DTO unmarked) against the @MemoizedQuery memo
 *   log         N request-sized lines through pino to an asynchronous destination (/dev/null, so
 *               the write itself costs next to nothing and what is measured is the hand-off): one
 *               write per line against batched (LOG_BATCH_BYTES, LOG_FLUSH_MS); CPU of the whole
 *               process (thread pool included)
 * Alternating, ROUNDS (7) rounds; µs of process CPU per call, median of rounds.
 *
 *   npm run bench:public:parts          # ROUNDS (7), CALLS (20000)
 */
import 'reflect-metadata';
import { pino } from 'pino';
import { createValidationPipe } from '../../src/common/pipes/validation.pipe';
import { LOG_BATCH_BYTES, LOG_FLUSH_MS } from '../../src/observability/logging';
import { LeaderboardQueryDto } from '../../src/ranking';
import { intFromEnv, loadAverage, runMain } from '../harness/env';

const ROUNDS = intFromEnv('ROUNDS', 7);
const CALLS = intFromEnv('CALLS', 20_000);

const cpuUs = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The same DTO without the memo's mark (the mark is read on the class itself, not inherited). */
class UnmarkedQuery extends LeaderboardQueryDto {}

async function validation(memoized: boolean): Promise<number> {
  const pipe = createValidationPipe();
  const metatype = memoized ? LeaderboardQueryDto : UnmarkedQuery;
  const metadata = { type: 'query' as const, metatype };
  const started = cpuUs();
  for (let i = 0; i < CALLS; i++) await pipe.transform({ limit: '10' }, metadata);
  return (cpuUs() - started) / CALLS;
}

async function logLines(batched: boolean): Promise<number> {
  const dest = '/dev/null';
  const destination = pino.destination(
    batched ? { dest, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS } : { dest, sync: false },
  );
  const logger = pino({ level: 'info', timestamp: pino.stdTimeFunctions.isoTime }, destination);
  const started = cpuUs();
  for (let i = 0; i < CALLS; i++) {
    logger.info(
      {
        reqId: '3b2e4c1a-8f0e-4d7b-9a51-0c2d7e6f9b10',
        method: 'GET',
        route: '/public/v1/boards/atp',
        path: '/public/v1/boards/atp',
        status: 200,
        apiKey: 7,
        durationMs: 1.234,
      },
      'request completed',
    );
    // A request a turn of the event loop, as served: a write in flight completes between lines.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise<void>((resolve) => destination.flush(() => resolve()));
  const used = (cpuUs() - started) / CALLS;
  destination.end();
  return used;
}

async function main(): Promise<void> {
  const parts: Array<[string, (after: boolean) => Promise<number>]> = [
    ['validation of ?limit=10', validation],
    ['request log line', logLines],
  ];
  for (const [name, measure] of parts) {
    await measure(false);
    await measure(true);
    const before: number[] = [];
    const after: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        before.push(await measure(false));
        after.push(await measure(true));
      } else {
        after.push(await measure(true));
        before.push(await measure(false));
      }
    }
    console.log(
      `${name}: before ${median(before).toFixed(1)} µs, after ${median(after).toFixed(1)} µs per call (median of ${ROUNDS} rounds; before ${before.map((v) => v.toFixed(1)).join(', ')}; after ${after.map((v) => v.toFixed(1)).join(', ')}), load average ${loadAverage()}`,
    );
  }
}

runMain(main);

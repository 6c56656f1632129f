/**
 * What the body validation costs per request, in one process: the service's own ValidationPipe
 * (createValidationPipe) on the plugin's hot bodies (a score upload, a balance sync, a player
 * login), with class-validator's rule lookups kept (cacheValidationMetadata, the service's way)
 * and worked out at every call (class-validator's own way), alternating, ROUNDS rounds of
 * ITERATIONS validations each. CPU-bound and single-threaded: the figures are µs per validation
 * on this machine, and their ratio is what to compare.
 *
 *   npm run bench:validation       # ROUNDS (5), ITERATIONS (20000)
 */
import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { createValidationPipe } from '../../src/common/pipes/validation.pipe';
import { SyncEconomyDto } from '../../src/economy/dto/economy.dto';
import { PlayerLoginDto } from '../../src/player/dto/player-login.dto';
import { UploadRecordDto } from '../../src/upload/dto/upload-record.dto';
import { intFromEnv, loadAverage, runMain } from '../harness/env';
import { gameplayRecord } from '../harness/payloads';

const ROUNDS = intFromEnv('ROUNDS', 5);
const ITERATIONS = intFromEnv('ITERATIONS', 20_000);

const BODIES: Array<[string, new () => object, () => Record<string, unknown>]> = [
  [
    'POST /player/upload',
    UploadRecordDto,
    () =>
      gameplayRecord({
        uid: 42,
        accessToken: 'a'.repeat(43),
        serverID: 7,
        levelID: 101,
        acc: 98.5,
        pass: true,
        time: Date.now() - 60_000,
      }),
  ],
  ['POST /player/economy', SyncEconomyDto, () => ({ uid: 42, accessToken: 'a'.repeat(43), wattHour: 1234 })],
  ['POST /player/login', PlayerLoginDto, () => ({ mode: 'TOKEN', version: 3, authToken: 'n'.repeat(32) })],
];

/** The rule lookups the cache puts on the storage instance: removed, class-validator's own (prototype) run. */
const CACHED = [
  'getTargetValidationMetadatas',
  'groupByPropertyName',
  'addValidationMetadata',
  'addValidationSchema',
] as const;

async function main(): Promise<void> {
  const pipe = createValidationPipe(); // installs the cache on the global storage
  const storage = getMetadataStorage() as unknown as Record<string, unknown>;
  const cached = Object.fromEntries(CACHED.map((name) => [name, storage[name]]));
  const useCache = (on: boolean) => {
    for (const name of CACHED) {
      if (on) storage[name] = cached[name];
      else delete storage[name];
    }
  };
  const time = async (metatype: new () => object, body: () => Record<string, unknown>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) await pipe.transform(body(), { type: 'body', metatype });
    return Number(process.hrtime.bigint() - started) / 1e3 / ITERATIONS;
  };
  console.log(`load average ${loadAverage()}; ${ROUNDS} rounds × ${ITERATIONS} validations per body and way`);
  const results: Record<string, { cached: number[]; uncached: number[] }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, metatype, body] of BODIES) {
      const entry = (results[name] ??= { cached: [], uncached: [] });
      for (const on of round % 2 === 0 ? [false, true] : [true, false]) {
        useCache(on);
        (on ? entry.cached : entry.uncached).push(await time(metatype, body));
      }
    }
  }
  useCache(true);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(
    '\n| body | µs per validation, rules worked out each call (class-validator) | kept (service) | kept ÷ each call |',
  );
  console.log('|---|---|---|---|');
  for (const [name, { cached: kept, uncached }] of Object.entries(results)) {
    console.log(
      `| ${name} | ${median(uncached).toFixed(1)} | ${median(kept).toFixed(1)} | ${(median(kept) / median(uncached)).toFixed(2)} |`,
    );
  }
  console.log(`\nmedians of ${ROUNDS} rounds; load average ${loadAverage()}`);
}

runMain(main);

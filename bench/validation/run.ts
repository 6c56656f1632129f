/**
 * What the body validation costs per request, in one process: the service's own ValidationPipe
 * (createValidationPipe) on the plugin's hot bodies (a score upload, a balance sync, a player
 * login), three ways, alternating, ROUNDS rounds of ITERATIONS validations each:
 * - class-validator's rule lookups worked out at every call (class-validator's own way), the body
 *   a plain value (Nest's pipe walks it for prototype keys, array gaps and binary values);
 * - the rule lookups kept (cacheValidationMetadata), the body a plain value;
 * - the rule lookups kept and the body marked as the JSON body parser marks a checked body
 *   (markCheckedJsonBody): the three walks skipped. This is the service's path for a request body.
 * CPU-bound and single-threaded: the figures are µs per validation on this machine, and their
 * ratio is what to compare.
 *
 *   npm run bench:validation       # ROUNDS (5), ITERATIONS (20000)
 */
import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { markCheckedJsonBody } from '../../src/common/http/json-body-check';
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
  type Way = 'each call' | 'kept' | 'kept, checked body';
  const WAYS: Way[] = ['each call', 'kept', 'kept, checked body'];
  const time = async (way: Way, metatype: new () => object, body: () => Record<string, unknown>) => {
    useCache(way !== 'each call');
    const checked = way === 'kept, checked body';
    const started = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) {
      const value = body();
      if (checked) markCheckedJsonBody(value);
      await pipe.transform(value, { type: 'body', metatype });
    }
    return Number(process.hrtime.bigint() - started) / 1e3 / ITERATIONS;
  };
  console.log(`load average ${loadAverage()}; ${ROUNDS} rounds × ${ITERATIONS} validations per body and way`);
  const results: Record<string, Record<Way, number[]>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, metatype, body] of BODIES) {
      const entry = (results[name] ??= { 'each call': [], kept: [], 'kept, checked body': [] });
      const order = round % 2 === 0 ? WAYS : [...WAYS].reverse();
      for (const way of order) entry[way].push(await time(way, metatype, body));
    }
  }
  useCache(true);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(
    '\n| body | µs per validation: rules worked out each call | rules kept | rules kept, checked JSON body (the service) | service ÷ each call |',
  );
  console.log('|---|---|---|---|---|');
  for (const [name, times] of Object.entries(results)) {
    const [each, kept, checked] = WAYS.map((way) => median(times[way]));
    console.log(
      `| ${name} | ${each.toFixed(1)} | ${kept.toFixed(1)} | ${checked.toFixed(1)} | ${(checked / each).toFixed(2)} |`,
    );
  }
  console.log(`\nmedians of ${ROUNDS} rounds; load average ${loadAverage()}`);
}

runMain(main);

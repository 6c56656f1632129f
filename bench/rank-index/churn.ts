/**
 * The in-process rank index's memory under a day of improved bests (docs/benchmarks.md "Rank
 * index memory under uploads"), without a database: the key sets of the network-day data built
 * as a load builds them (CHARTS charts of KEYS_PER_CHART keys and a site order of SITE_KEYS), then
 * MOVES moves, each what an improved best does: in its chart and in the site order, one key
 * leaves (a random one) and a new key goes in at a random place. A share NEW_BESTS of the moves
 * (0 by default) are a player's first best on a chart instead: its key goes in and none leaves,
 * so the set grows, as the network's does (most network-day uploads are a player's first play of
 * a chart). PLAY_SHAPE: `uniform` (the default: every chart and acc alike) or `network` (the
 * moves' charts and accs drawn as the network-day simulator plays them, bench/harness/payloads.ts:
 * popular charts, high accs; a new best goes in at the end of its acc's run of keys). With both
 * left unset the moves are drawn exactly as before they existed. At each checkpoint it reports
 * the resident memory (after a
 * full GC and a pause for the ArrayBuffers' sweeping), V8's heap, the ArrayBuffers, the index's
 * own block bytes (their capacity), the main malloc arena (`[heap]`), and the moves' speed.
 * The process's memory apart from the index is a bare Node's: what grows is the index and what
 * malloc keeps of the buffers it dropped.
 *
 *   npm run bench:rank-index:churn
 *   MOVES=50000,300000,1000000,3000000 npm run bench:rank-index:churn
 *   NEW_BESTS=1 MOVES=200000,1000000,3000000 npm run bench:rank-index:churn   # growth alone
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompactKeySet, WordKey } from '../../src/ranking/rank-index/compact-key-set';
import { CompactKeySetBuilder } from '../../src/ranking/rank-index/compact-key-set-builder';
import type { RankKey } from '../../src/ranking/rank-index/rank-index';
import { CHART_KEY_CODEC, RankKeyCodec, SITE_KEY_CODEC } from '../../src/ranking/rank-index/rank-key-codec';
import { intFromEnv, listFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { mainArenaMiB } from '../harness/memory';
import { randomPlay } from '../harness/payloads';
import { memoryOf } from '../harness/process';

const CHARTS = intFromEnv('CHARTS', 2_000);
const KEYS_PER_CHART = intFromEnv('KEYS_PER_CHART', 4_475);
const SITE_KEYS = intFromEnv('SITE_KEYS', 1_000_000);
const CHECKPOINTS = listFromEnv('MOVES', ['50000', '100000', '300000', '1000000', '3000000']).map(Number);
const NEW_BESTS = Number(process.env.NEW_BESTS ?? '0');
const PLAY_SHAPE = process.env.PLAY_SHAPE ?? 'uniform';
if (!['uniform', 'network'].includes(PLAY_SHAPE))
  throw new Error(`PLAY_SHAPE is uniform or network, not ${PLAY_SHAPE}`);

interface Checkpoint {
  moves: number;
  rssMiB: number;
  v8HeapMiB: number;
  arrayBuffersMiB: number;
  indexMiB: number;
  mainArenaMiB: number;
  movesPerSecond: number;
}

const MiB = 2 ** 20;

async function settledMemory(sets: CompactKeySet[]): Promise<Omit<Checkpoint, 'moves' | 'movesPerSecond'>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc (npm run bench:rank-index:churn does)');
  gc();
  await sleep(1_000); // the dropped ArrayBuffers are freed by a concurrent sweep after the GC
  gc();
  await sleep(500);
  const usage = process.memoryUsage();
  return {
    rssMiB: memoryOf(process.pid).rss / MiB,
    v8HeapMiB: usage.heapTotal / MiB,
    arrayBuffersMiB: usage.arrayBuffers / MiB,
    indexMiB: sets.reduce((bytes, set) => bytes + set.bytes, 0) / MiB,
    mainArenaMiB: mainArenaMiB(process.pid),
  };
}

const T0 = Date.UTC(2026, 0, 1);

async function main(): Promise<void> {
  let seed = 42;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  // Keys as the network data has them (bench/harness/generate.ts), packed by the index's codecs:
  // chart keys (−acc, first reached, uid) with two-decimal accs 80–100 (15 % at 100), plays over
  // 115 days, uids of a million players; the site order (−ATP·10⁴, 0, uid).
  const PLAYERS = 1_000_000;
  const words = new Uint32Array(3);
  const pack = (codec: RankKeyCodec, key: RankKey): WordKey => {
    if (!codec.encode(...key, words)) throw new Error(`key does not pack: ${key.join()}`);
    return [words[0], words[1], words[2]];
  };
  const acc = () => (random() < 0.15 ? 100 : (8_000 + Math.floor(random() * 2_000)) / 100);
  const uid = () => 1 + Math.floor(random() * PLAYERS);
  const atp = () => -Math.floor(random() * 150 * 10_000);
  // Each chart's keys as words in typed arrays, sorted through an index: the load's garbage would
  // otherwise stay in the process's memory and blur what the index takes.
  const chartWords = new Uint32Array(KEYS_PER_CHART * 3);
  const order = new Uint32Array(KEYS_PER_CHART);
  const compareAt = (x: number, y: number) =>
    chartWords[x * 3] - chartWords[y * 3] ||
    chartWords[x * 3 + 1] - chartWords[y * 3 + 1] ||
    chartWords[x * 3 + 2] - chartWords[y * 3 + 2];
  const sets: CompactKeySet[] = [];
  for (let chart = 0; chart < CHARTS; chart++) {
    for (let i = 0; i < KEYS_PER_CHART; i++) {
      chartWords.set(pack(CHART_KEY_CODEC, [-acc(), T0 + Math.floor(random() * 1e10), uid()]), i * 3);
      order[i] = i;
    }
    order.sort(compareAt);
    const builder = new CompactKeySetBuilder();
    order.forEach((at, i) => {
      // A player's two plays of one chart: one best.
      if (i === 0 || compareAt(order[i - 1], at) !== 0)
        builder.append(chartWords[at * 3], chartWords[at * 3 + 1], chartWords[at * 3 + 2]);
    });
    sets.push(builder.finish());
  }
  // The site order sorted as one Float64Array of (−ATP, uid) in one number, not a million arrays
  // whose garbage would stay in the process's memory.
  const siteOrder = Float64Array.from({ length: SITE_KEYS }, (_, i) => atp() * 2 ** 21 + i + 1).sort();
  const site = new CompactKeySetBuilder();
  for (const composite of siteOrder) {
    const negativeAtp = Math.floor(composite / 2 ** 21);
    site.append(...pack(SITE_KEY_CODEC, [negativeAtp, 0, composite - negativeAtp * 2 ** 21]));
  }
  sets.push(site.finish());
  /** The time of the n-th new best: after every loaded one, a second apart (today's uploads). */
  let now = T0 + 1e10;

  const keyCount = () => sets.reduce((sum, set) => sum + set.size, 0);
  const keys = keyCount();
  const loaded = await settledMemory(sets);
  const line = (label: string, m: Omit<Checkpoint, 'moves' | 'movesPerSecond'>, speed = '') =>
    console.log(
      `${label}: RSS ${m.rssMiB.toFixed(0)} MiB, V8 heap ${m.v8HeapMiB.toFixed(0)}, ArrayBuffers ${m.arrayBuffersMiB.toFixed(1)}, ` +
        `index blocks ${m.indexMiB.toFixed(1)} MiB for ${keyCount()} keys (${((m.indexMiB * MiB) / keyCount()).toFixed(2)} B a key), main arena ${m.mainArenaMiB.toFixed(0)} MiB${speed}`,
    );
  console.log(
    `${CHARTS} charts × ${KEYS_PER_CHART} keys + ${SITE_KEYS} site keys = ${keys} keys; ${NEW_BESTS * 100} % of the moves new bests, ${PLAY_SHAPE} plays; load average ${loadAverage()}`,
  );
  line('loaded', loaded);

  const checkpoints: Checkpoint[] = [];
  let moves = 0;
  for (const target of CHECKPOINTS) {
    const started = process.hrtime.bigint();
    const from = moves;
    for (; moves < target; moves++) {
      // The chart's best moves (a better acc, reached now), and with it the player's place in the site order.
      const play = PLAY_SHAPE === 'network' ? randomPlay(random, CHARTS) : null;
      const chart = sets[play ? play.levelID - 1 : Math.floor(random() * CHARTS)];
      const player = uid();
      now += 1_000;
      for (const [set, key] of [
        [chart, pack(CHART_KEY_CODEC, [-(play ? play.acc : acc()), now, player])],
        [sets[CHARTS], pack(SITE_KEY_CODEC, [atp(), 0, player])],
      ] as Array<[CompactKeySet, WordKey]>) {
        const first = set !== sets[CHARTS] && NEW_BESTS > 0 && random() < NEW_BESTS;
        if (!first) {
          const at = Math.floor(random() * set.size);
          const [victim] = set.slice(at, at + 1);
          set.delete(victim[0], victim[1], victim[2]);
        }
        set.insert(...key);
      }
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const memory = await settledMemory(sets);
    const checkpoint = { moves, ...memory, movesPerSecond: (moves - from) / seconds };
    checkpoints.push(checkpoint);
    line(`${moves} moves`, memory, `; ${Math.round(checkpoint.movesPerSecond)} moves/s`);
  }
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(
    join(OUT_DIR, 'rank-index-churn.json'),
    JSON.stringify(
      {
        charts: CHARTS,
        keysPerChart: KEYS_PER_CHART,
        siteKeys: SITE_KEYS,
        newBests: NEW_BESTS,
        playShape: PLAY_SHAPE,
        loaded,
        checkpoints,
        loadAverage: loadAverage(),
      },
      null,
      2,
    ),
  );
}

runMain(main);

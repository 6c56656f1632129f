/**
 * What a running service's resident memory is made of at one moment, from /proc and one scrape of
 * its /metrics (prom-client's process metrics):
 *   file      pages of files mapped in (node's own binary, shared libraries): Rss − Anonymous
 *   v8Heap    V8's heap as committed (`nodejs_heap_size_total_bytes`: every space, young and old)
 *   external  memory V8 accounts for outside its heap (`nodejs_external_memory_bytes`): the
 *             ArrayBuffers, the in-process rank index's key blocks among them
 *   other     the rest of the anonymous memory: what Node and its libraries malloc, thread stacks,
 *             and malloc's free memory it has not given back (fragmentation)
 * and, overlapping those, `mainArena`: the resident part of malloc's main arena (the `[heap]`
 * mapping), where the main thread's mallocs go (ArrayBuffers under the mmap threshold too; 0
 * under jemalloc, which maps its own arenas). A
 * heap or external figure read from a different moment than /proc is off by what changed between
 * the two reads (milliseconds apart).
 */
import { readFileSync } from 'node:fs';
import { metricValue } from './event-loop';

export interface MemoryBreakdown {
  rssMiB: number;
  fileMiB: number;
  v8HeapMiB: number;
  externalMiB: number;
  otherMiB: number;
  mainArenaMiB: number;
}

const MiB = 2 ** 20;

export function memoryBreakdown(pid: number, metricsText: string): MemoryBreakdown {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  const rss = kib('Rss') / 1024;
  const anonymous = kib('Anonymous') / 1024;
  const v8Heap = metricValue(metricsText, 'nodejs_heap_size_total_bytes') / MiB;
  const external = metricValue(metricsText, 'nodejs_external_memory_bytes') / MiB;
  return {
    rssMiB: rss,
    fileMiB: rss - anonymous,
    v8HeapMiB: v8Heap,
    externalMiB: external,
    otherMiB: anonymous - v8Heap - external,
    mainArenaMiB: mainArenaMiB(pid),
  };
}

/** The resident size of process `pid`'s `[heap]` mapping, malloc's main arena (0 when it has none). */
export function mainArenaMiB(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const start = smaps.indexOf(' [heap]\n');
  if (start < 0) return 0;
  const rss = /^Rss:\s+(\d+) kB/m.exec(smaps.slice(start));
  return rss ? Number(rss[1]) / 1024 : 0;
}

/** `RSS 371 = file 56 + V8 heap 96 + external 126 + other 93 MiB (main arena 169)`, per instance. */
export function formatMemory(breakdowns: MemoryBreakdown[]): string {
  const r = (n: number) => n.toFixed(0);
  return breakdowns
    .map(
      (m) =>
        `RSS ${r(m.rssMiB)} = file ${r(m.fileMiB)} + V8 heap ${r(m.v8HeapMiB)} + external ${r(m.externalMiB)} + other ${r(m.otherMiB)} MiB (main arena ${r(m.mainArenaMiB)})`,
    )
    .join(' / ');
}

/**
 * What the simulator counts: per call (an HTTP route or a WebSocket exchange) the number of
 * calls, the answers by status, how many were unexpected, and latencies; plus named events
 * (WebSocket closes by code, frames received). Windows collect the same for a stretch of a run
 * (the benchmark measures each offered rate in its own window).
 */
import { summarize } from '../harness/load';

export interface CallStats {
  call: string;
  count: number;
  /** Answers by status ("error" for a transport failure, "timeout" for an unanswered frame). */
  byStatus: Record<string, number>;
  unexpected: number;
  p50: number;
  p99: number;
  max: number;
}

export interface MetricsReport {
  seconds: number;
  calls: CallStats[];
  events: Record<string, number>;
  unexpected: number;
  /**
   * The first unexpected answers (at most 100): seconds into the run, the call, its answer and,
   * for a player's or a server's call, their last token events (login, refresh, resume, closes).
   */
  firstUnexpected: string[];
}

interface Entry {
  count: number;
  byStatus: Map<string, number>;
  unexpected: number;
  latencies: number[];
}

export class Collector {
  private readonly calls = new Map<string, Entry>();
  private readonly events = new Map<string, number>();
  private readonly unexpectedSamples: string[] = [];
  private readonly startedMs = performance.now();
  private endedMs: number | null = null;

  record(call: string, status: number | string, ms: number, unexpected: boolean, detail?: string): void {
    let entry = this.calls.get(call);
    if (!entry) {
      entry = { count: 0, byStatus: new Map(), unexpected: 0, latencies: [] };
      this.calls.set(call, entry);
    }
    entry.count++;
    entry.byStatus.set(String(status), (entry.byStatus.get(String(status)) ?? 0) + 1);
    entry.latencies.push(ms);
    if (unexpected) {
      entry.unexpected++;
      if (this.unexpectedSamples.length < 100) {
        const at = ((performance.now() - this.startedMs) / 1000).toFixed(1);
        this.unexpectedSamples.push(`t+${at}s ${call}: ${status}${detail ? ` ${detail.slice(0, 600)}` : ''}`);
      }
    }
  }

  event(name: string, count = 1): void {
    this.events.set(name, (this.events.get(name) ?? 0) + count);
  }

  close(): void {
    this.endedMs ??= performance.now();
  }

  latencies(call: string): number[] {
    return this.calls.get(call)?.latencies ?? [];
  }

  count(call: string): number {
    return this.calls.get(call)?.count ?? 0;
  }

  unexpectedOf(call: string): number {
    return this.calls.get(call)?.unexpected ?? 0;
  }

  report(): MetricsReport {
    const calls = [...this.calls.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([call, entry]): CallStats => {
        const latency = summarize(entry.latencies);
        return {
          call,
          count: entry.count,
          byStatus: Object.fromEntries(entry.byStatus),
          unexpected: entry.unexpected,
          p50: latency.p50,
          p99: latency.p99,
          max: latency.max,
        };
      });
    return {
      seconds: ((this.endedMs ?? performance.now()) - this.startedMs) / 1000,
      calls,
      events: Object.fromEntries([...this.events.entries()].sort(([a], [b]) => a.localeCompare(b))),
      unexpected: calls.reduce((sum, call) => sum + call.unexpected, 0),
      firstUnexpected: [...this.unexpectedSamples],
    };
  }
}

/** The run's collector plus any open windows: every record goes to all of them. */
export class Metrics extends Collector {
  private readonly windows = new Set<Collector>();

  override record(call: string, status: number | string, ms: number, unexpected: boolean, detail?: string): void {
    super.record(call, status, ms, unexpected, detail);
    for (const window of this.windows) window.record(call, status, ms, unexpected, detail);
  }

  override event(name: string, count = 1): void {
    super.event(name, count);
    for (const window of this.windows) window.event(name, count);
  }

  /** Starts collecting a stretch of the run; `stop` ends it and returns what it saw. */
  openWindow(): { collector: Collector; stop(): Collector } {
    const collector = new Collector();
    this.windows.add(collector);
    return {
      collector,
      stop: () => {
        this.windows.delete(collector);
        collector.close();
        return collector;
      },
    };
  }
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '–');

/** The report as a fixed-width table. */
export function formatReport(report: MetricsReport): string {
  const lines = [
    `${'call'.padEnd(34)} ${'count'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}  unexpected  statuses`,
  ];
  for (const call of report.calls) {
    const statuses = Object.entries(call.byStatus)
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
    lines.push(
      `${call.call.padEnd(34)} ${String(call.count).padStart(8)} ${ms(call.p50).padStart(8)} ${ms(call.p99).padStart(8)} ${ms(call.max).padStart(8)}  ${String(call.unexpected).padStart(10)}  ${statuses}`,
    );
  }
  const events = Object.entries(report.events);
  if (events.length > 0) lines.push('', `events: ${events.map(([name, count]) => `${name} ${count}`).join(', ')}`);
  lines.push('', `unexpected answers: ${report.unexpected}`);
  for (const sample of report.firstUnexpected) lines.push(`  ${sample}`);
  return lines.join('\n');
}

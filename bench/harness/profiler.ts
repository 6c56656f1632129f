/**
 * A CPU profile of a stretch of a service's life, through the inspector protocol: start the
 * service with `--inspect=127.0.0.1:<port>` (inspectArgs), then `start` before the stretch and
 * `stop` after it. Unlike `--cpu-prof`, the profile holds only that stretch (no start-up, no
 * rank-index load). The sampling costs CPU of its own: figures of a profiled run are not figures.
 */
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';

/** NODE_OPTIONS for a service that can be profiled on `port`. */
export const inspectArgs = (port: number) => `--inspect=127.0.0.1:${port}`;

export interface CpuProfiler {
  start(): Promise<void>;
  /** Stops sampling and writes the .cpuprofile (Chrome DevTools format) to `file`. */
  stop(file: string): Promise<void>;
  close(): void;
}

export async function connectProfiler(port: number): Promise<CpuProfiler> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async start() {
      await call('Profiler.enable');
      // 1 ms between samples (the default is 1 ms too; said here because the CPU it costs depends on it).
      await call('Profiler.setSamplingInterval', { interval: 1000 });
      await call('Profiler.start');
    },
    async stop(file: string) {
      const result = (await call('Profiler.stop')) as { profile: unknown };
      writeFileSync(file, JSON.stringify(result.profile));
    },
    close: () => socket.close(),
  };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/**
 * The functions with the most self time, and self time by where the code lives (a package of
 * node_modules, the service's own code, Node's internals, GC, idle): a plain-text summary.
 */
export function summarizeProfile(profile: { nodes: ProfileNode[]; samples: number[] }, top = 30): string {
  const hits = new Map<number, number>();
  for (const sample of profile.samples) hits.set(sample, (hits.get(sample) ?? 0) + 1);
  const total = profile.samples.length;
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (count === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^file:\/\//, '');
    const key = `${functionName || '(anonymous)'} ${file ? `${file.replace(/^.*node_modules\//, 'node_modules/').replace(/^.*\/dist\//, 'dist/')}:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + count);
    byPlace.set(placeOf(functionName, file), (byPlace.get(placeOf(functionName, file)) ?? 0) + count);
  }
  const pct = (count: number) => `${((count / total) * 100).toFixed(1).padStart(5)} %`;
  const lines = [`${total} samples`, '', 'self time by place:'];
  for (const [place, count] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 25))
    lines.push(`  ${pct(count)}  ${place}`);
  lines.push('', `top ${top} functions by self time:`);
  for (const [name, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${pct(count)}  ${name}`);
  return lines.join('\n');
}

function placeOf(functionName: string, file: string): string {
  if (!file) return `(${functionName || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/')[0]}`;
  const own = /\/dist\/src\/([^/]+)/.exec(file) ?? /\/src\/([^/]+)/.exec(file);
  return own ? `service: ${own[1]}` : file;
}

/**
 * The plugin simulator.
 *
 *   npm run simulate -- --smoke                                  # every call once; exit 1 on any unexpected answer
 *   npm run simulate -- --servers 10 --players 20 --minutes 2    # a small network against a service it starts
 *   npm run simulate -- --url https://rhythmc.example --admin-token … --smoke
 *
 * Without --url it starts the service itself (the build, or src with --source src): on a fresh
 * embedded data dir, or on DATABASE_URL (and REDIS_URL; --instances N for several instances behind
 * the simulator, round-robin per game server), with its own identity provider for ONLINE logins.
 * A load run against instances it started also reports the event-loop delay of each (p50, p99,
 * max over the run, from the instance's own /metrics).
 * `npm run simulate -- --help` lists every option.
 */
import { loadAverage } from '../harness/env';
import { EventLoopDelay, eventLoopDelays, formatEventLoop } from '../harness/event-loop';
import { mib, stopAllChildren } from '../harness/process';
import { openDeployment } from './deployment';
import { formatReport, MetricsReport } from './metrics';
import { BurstResult, Network } from './network';
import { HELP, parseOptions, SimOptions } from './options';
import { runSmoke, SmokeReport } from './smoke';

interface LoadReport {
  mode: 'load';
  servers: number;
  playersPerServer: number;
  minutes: number;
  uploadRate: number;
  uploads: Network['uploads'];
  switches: Network['switches'];
  packLinks: Network['packLinks'];
  startMs: number;
  restart: BurstResult | null;
  peakRssMiB: number[];
  /** Of each instance the simulator started, from provisioning to the last logout; empty for --url. */
  eventLoop: EventLoopDelay[];
  loadAverage: number;
  metrics: MetricsReport;
}

/**
 * `metricsUrls`: the instances whose event-loop delay the run reports, the ones the simulator
 * started. Not a --url deployment's: a scrape resets the window of the instance it lands on,
 * which would cut its own Prometheus' windows short, and behind a load balancer it lands on any.
 */
async function load(
  options: SimOptions,
  urls: string[],
  metricsUrls: string[],
  adminToken: string,
  identityProvider: boolean,
  log: (line: string) => void,
  peakRss: () => number[],
): Promise<LoadReport> {
  const uploadRate = options.uploadRate ?? (options.servers * options.players) / 120;
  const network = new Network(
    {
      urls,
      adminToken,
      identityProvider,
      servers: options.servers,
      players: options.players,
      resumeInterval: options.resumeInterval,
      onlineShare: options.onlineShare,
      loginConcurrency: options.loginConcurrency,
      existingPlayers: options.existingPlayers,
      churn: options.churn,
      chatPerMinute: options.chatPerMinute,
      switchPerMinute: options.switchPerMinute,
      packLinks: options.packLinks,
      seed: options.seed,
      uploadRate,
      followAdvertised: options.followAdvertised,
    },
    log,
  );
  // The scrape starts each instance's event-loop window here: its start-up stays out of it.
  await eventLoopDelays(metricsUrls);
  await network.provision();
  const started = await network.start();
  const half = (options.minutes * 60_000) / 2;
  await new Promise((resolve) => setTimeout(resolve, half));
  let restart: BurstResult | null = null;
  if (options.restartServers > 0) {
    log(`restarting ${options.restartServers} server(s)`);
    restart = await network.restart(options.restartServers);
    log(
      `restart: ${restart.players} players back in ${(restart.loginsMs / 1000).toFixed(1)} s (synced ${(restart.syncedMs / 1000).toFixed(1)} s)`,
    );
  }
  await new Promise((resolve) => setTimeout(resolve, half));
  log('stopping: players and servers log out');
  await network.stop({ logoutPlayers: true });
  const eventLoop = await eventLoopDelays(metricsUrls);
  return {
    mode: 'load',
    servers: options.servers,
    playersPerServer: options.players,
    minutes: options.minutes,
    uploadRate,
    uploads: network.uploads,
    switches: network.switches,
    packLinks: network.packLinks,
    startMs: started.ms,
    restart,
    peakRssMiB: peakRss().map(mib),
    eventLoop,
    loadAverage: loadAverage(),
    metrics: network.metrics.report(),
  };
}

async function main(): Promise<number> {
  const parsed = parseOptions(process.argv.slice(2));
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const options = parsed;
  // With --json, progress goes to stderr and the report alone to stdout.
  const log = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);
  const deployment = await openDeployment(options, log);
  try {
    if (options.smoke) {
      const report: SmokeReport = await runSmoke(
        {
          url: deployment.urls[0],
          adminToken: deployment.adminToken,
          identityProvider: deployment.identityProvider !== null,
          selfStarted: deployment.selfStarted,
          followAdvertised: options.followAdvertised,
        },
        log,
      );
      const failed = report.steps.filter((step) => step.status === 'failed');
      const skipped = report.steps.filter((step) => step.status === 'skipped');
      if (options.json) process.stdout.write(`${JSON.stringify({ mode: 'smoke', ...report }, null, 2)}\n`);
      else
        log(
          report.ok
            ? `\nsmoke ok: ${report.steps.filter((s) => s.status === 'ok').length} calls answered as expected` +
                (skipped.length > 0
                  ? `; ${skipped.length} skipped (not checked, see "skip" above): ${skipped.map((s) => s.call).join('; ')}`
                  : '')
            : `\nsmoke FAILED at ${failed.map((s) => s.call).join(', ')}`,
        );
      return report.ok ? 0 : 1;
    }
    const report = await load(
      options,
      deployment.urls,
      deployment.instances.map((instance) => instance.url),
      deployment.adminToken,
      deployment.identityProvider !== null,
      log,
      () => deployment.peakRss(),
    );
    if (options.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      log(
        `\n${report.servers} servers × ${report.playersPerServer} players, ${report.minutes} min, uploads offered ${report.uploadRate.toFixed(1)}/s`,
      );
      if (options.switchPerMinute > 0)
        log(
          `proxy switches: ${report.switches.started} started, ${report.switches.done} done (logged in on the new server, logged out of the old)`,
        );
      if (options.packLinks) {
        const lifetimes = options.linkTtl
          ? ` = ${(report.packLinks.oldestOkSeconds / options.linkTtl).toFixed(1)} download-link lifetimes`
          : '';
        log(
          `pack links: ${report.packLinks.checks} fetches of the URL from server login; the oldest that answered 200 was ${report.packLinks.oldestOkSeconds.toFixed(0)} s old${lifetimes}`,
        );
      }
      log(
        `uploads: ${JSON.stringify(report.uploads)}; peak RSS of the service: ${report.peakRssMiB.length ? report.peakRssMiB.map((m) => `${m} MiB`).join(', ') : 'n/a (--url)'}; ` +
          `event-loop delay of the service over the run: ${report.eventLoop.length ? formatEventLoop(report.eventLoop) : 'n/a (--url)'}; load average ${report.loadAverage}\n`,
      );
      log(formatReport(report.metrics));
    }
    return 0;
  } finally {
    await deployment.stop();
  }
}

// Interrupted: the service instances the simulator started must not outlive it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAllChildren();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `simulator failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);

/**
 * What the simulator talks to: deployments given with --url, or service instances it starts
 * itself (child processes of the build, sharing DATABASE_URL and REDIS_URL; a fresh embedded data
 * dir without DATABASE_URL), with a small RESOURCE_DIR and its own identity provider.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateResourceTree } from '../harness/generate';
import { Child, memoryOf, startServiceProcess, stopChild } from '../harness/process';
import { dropRedisPrefix } from '../harness/redis';
import { IdentityProvider, startIdentityProvider } from './identity-provider';
import type { SimOptions } from './options';

export interface Deployment {
  urls: string[];
  adminToken: string;
  /** Null when ONLINE logins cannot be verified (a --url deployment without --idp-port). */
  identityProvider: IdentityProvider | null;
  /** The service processes the simulator started (empty for --url). */
  instances: Child[];
  /** Whether the simulator started the service (and may shape its catalog freely). */
  selfStarted: boolean;
  /** Peak resident memory of each started instance so far, in bytes. */
  peakRss(): number[];
  stop(): Promise<void>;
}

/** The pack file the simulator's RESOURCE_DIR holds (described through PUT /admin/packs by the smoke). */
export const SIM_PACK_FILE = 'packs/pack-0.zip';

export async function openDeployment(options: SimOptions, log: (line: string) => void): Promise<Deployment> {
  if (options.urls.length > 0) {
    const identityProvider = options.idpPort === null ? null : await startIdentityProvider(options.idpPort, '0.0.0.0');
    if (identityProvider)
      log(
        `identity provider on port ${new URL(identityProvider.url).port} (the deployment's IDENTITY_PROVIDER_URL must point at it)`,
      );
    return {
      urls: options.urls,
      adminToken: options.adminToken as string,
      identityProvider,
      instances: [],
      selfStarted: false,
      peakRss: () => [],
      stop: async () => {
        await identityProvider?.stop();
      },
    };
  }

  const work = mkdtempSync(join(tmpdir(), 'rhythmc-sim-'));
  const resourceDir = join(work, 'resources');
  // A few files of each kind, so the manifest, downloads and the pack manifest have something to answer.
  generateResourceTree(resourceDir, 100, 64 * 1024);
  const identityProvider = await startIdentityProvider(options.idpPort ?? 0);
  const adminToken = randomBytes(24).toString('hex');
  const redisPrefix = `rhythmc-sim:${randomBytes(6).toString('hex')}:`;
  const instances: Child[] = [];
  const stop = async () => {
    await Promise.all(instances.map((instance) => stopChild(instance)));
    await identityProvider.stop();
    if (options.redisUrl) await dropRedisPrefix(options.redisUrl, redisPrefix).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < options.instances; i++) {
      // One after the other: the first applies the migrations.
      const instance = await startServiceProcess({
        name: `service instance ${i + 1}`,
        source: options.source,
        ...(options.buildRoot ? { buildRoot: options.buildRoot } : {}),
        databaseUrl: options.databaseUrl ?? '',
        redisUrl: options.redisUrl ?? '',
        adminToken,
        env: {
          DATA_DIR: join(work, 'data'),
          RESOURCE_DIR: resourceDir,
          REDIS_KEY_PREFIX: redisPrefix,
          IDENTITY_PROVIDER_URL: identityProvider.url,
          LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'warn',
          ...(options.linkTtl !== null ? { RESOURCE_LINK_TTL_SECONDS: String(options.linkTtl) } : {}),
        },
        log: process.env.SIM_LOG_FILE,
      });
      instances.push(instance);
      log(
        `started ${instance.name} (${options.databaseUrl ? 'PostgreSQL' : 'embedded database'}${options.redisUrl ? ', Redis' : ''}) at ${instance.url} in ${(instance.startedMs / 1000).toFixed(1)} s`,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    urls: instances.map((instance) => instance.url),
    adminToken,
    identityProvider,
    instances,
    selfStarted: true,
    peakRss: () => instances.map((instance) => memoryOf(instance.pid).peakRss),
    stop,
  };
}

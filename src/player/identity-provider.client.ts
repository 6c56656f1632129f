import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnavailableError } from '../common/errors/app-error';

export interface IdentityProfile {
  id: string;
  name: string;
}

const TIMEOUT_MS = 5_000;
/** Redirects followed (as fetch did: an IDENTITY_PROVIDER_URL behind an http → https or proxy redirect). */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/**
 * Idle kept-alive connections are closed after this long (undici's default, which fetch had): a
 * provider that drops idle connections first would otherwise fail a reused one with ECONNRESET.
 */
const IDLE_SOCKET_MS = 4_000;
/** A profile is a few hundred bytes; anything far larger is not one. */
const MAX_BODY_BYTES = 64 * 1024;

/** How long a found profile is reused for the same uuid (docs/decisions.md "Players": ONLINE logins in a burst). */
export const PROFILE_REUSE_MS = 60_000;
/** Profiles kept at most; the oldest go first (a restarting network of 20,000 players fits). */
const MAX_REUSED_PROFILES = 50_000;

/**
 * The Mojang-compatible profile lookup (decisions.md §4):
 * `GET {IDENTITY_PROVIDER_URL}/session/minecraft/profile/{uuid without dashes}`.
 * 200 → the profile; 204/404 → null (no such account); no answer in 5 s or any other answer → 503.
 * No token of ours is ever sent there.
 */
@Injectable()
export class IdentityProviderClient implements OnModuleDestroy {
  private readonly logger = new Logger('IdentityProvider');
  /**
   * node:http(s) with kept-alive connections rather than fetch: in a login burst every ONLINE
   * login asks the provider, and fetch (undici) cost about twice the CPU per lookup (bench/login-burst).
   */
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
  };

  /** Found profiles by uuid key, with the time they were fetched (insertion order = age). */
  private readonly found = new Map<string, { profile: IdentityProfile; at: number }>();
  /** Lookups in flight: concurrent logins of one uuid share one request. */
  private readonly pending = new Map<string, Promise<IdentityProfile | null>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  onModuleDestroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * The account of `uuid`. A profile found within the last PROFILE_REUSE_MS is reused, and
   * concurrent lookups of one uuid share a request: a player switching servers of a network, or
   * reconnecting in a login burst, does not cost another call to the provider (whose rate limit is
   * per address). Only found profiles are reused; "no such account" and failures are asked again.
   */
  async lookup(uuid: string): Promise<IdentityProfile | null> {
    const key = uuid.replace(/-/g, '').toLowerCase();
    const reused = this.found.get(key);
    if (reused && Date.now() - reused.at < PROFILE_REUSE_MS) return reused.profile;
    let request = this.pending.get(key);
    if (!request) {
      request = this.fetchProfile(key).finally(() => this.pending.delete(key));
      this.pending.set(key, request);
    }
    const profile = await request;
    if (profile) this.remember(key, profile);
    return profile;
  }

  private remember(key: string, profile: IdentityProfile): void {
    this.found.delete(key);
    this.found.set(key, { profile, at: Date.now() });
    if (this.found.size > MAX_REUSED_PROFILES) this.found.delete(this.found.keys().next().value as string);
  }

  private async fetchProfile(key: string): Promise<IdentityProfile | null> {
    const url = `${this.config.identityProviderUrl}/session/minecraft/profile/${key}`;
    let response: { status: number; body: string };
    try {
      response = await this.getFollowingRedirects(url);
    } catch (error) {
      this.logger.warn(`Profile lookup failed: ${error instanceof Error ? error.message : String(error)}`);
      throw new UnavailableError('The identity provider cannot be reached');
    }
    if (response.status === 204 || response.status === 404) return null;
    if (response.status !== 200) {
      this.logger.warn(`Profile lookup answered ${response.status}`);
      throw new UnavailableError('The identity provider did not answer as expected');
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new UnavailableError('The identity provider answered malformed JSON');
    }
    const profile = body as Partial<IdentityProfile> | null;
    if (!profile || typeof profile.id !== 'string' || typeof profile.name !== 'string') {
      throw new UnavailableError('The identity provider answered an unexpected profile');
    }
    return { id: profile.id, name: profile.name };
  }

  /** GET, following up to MAX_REDIRECTS redirects; the whole exchange is bounded by TIMEOUT_MS. */
  private async getFollowingRedirects(url: string): Promise<{ status: number; body: string }> {
    const deadline = Date.now() + TIMEOUT_MS;
    let target = new URL(url);
    for (let hop = 0; ; hop++) {
      const response = await this.get(target, deadline);
      if (!REDIRECTS.has(response.status) || response.location === undefined) return response;
      if (hop === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      target = new URL(response.location, target);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        throw new Error(`redirect to ${target.protocol}`);
    }
  }

  /** One GET, its exchange (connect, answer, body) ended at `deadline`. */
  private get(target: URL, deadline: number): Promise<{ status: number; body: string; location?: string }> {
    const https = target.protocol === 'https:';
    const request = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        target,
        { method: 'GET', agent: https ? this.agents.https : this.agents.http, headers: { Accept: 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) req.destroy(new Error(`answer over ${MAX_BODY_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              location: res.headers.location,
            }),
          );
          res.on('error', reject);
        },
      );
      const timer = setTimeout(
        () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      req.on('error', reject);
      req.on('close', () => clearTimeout(timer));
      req.end();
    });
  }
}

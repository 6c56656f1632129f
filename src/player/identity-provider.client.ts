import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnavailableError } from '../common/errors/app-error';

export interface IdentityProfile {
  id: string;
  name: string;
}

const TIMEOUT_MS = 5_000;

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
export class IdentityProviderClient {
  private readonly logger = new Logger('IdentityProvider');

  /** Found profiles by uuid key, with the time they were fetched (insertion order = age). */
  private readonly found = new Map<string, { profile: IdentityProfile; at: number }>();
  /** Lookups in flight: concurrent logins of one uuid share one request. */
  private readonly pending = new Map<string, Promise<IdentityProfile | null>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

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
    let response: Response;
    try {
      response = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
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
      body = await response.json();
    } catch {
      throw new UnavailableError('The identity provider answered malformed JSON');
    }
    const profile = body as Partial<IdentityProfile> | null;
    if (!profile || typeof profile.id !== 'string' || typeof profile.name !== 'string') {
      throw new UnavailableError('The identity provider answered an unexpected profile');
    }
    return { id: profile.id, name: profile.name };
  }
}

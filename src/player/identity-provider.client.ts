import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UnavailableError } from '../common/errors/app-error';

export interface IdentityProfile {
  id: string;
  name: string;
}

const TIMEOUT_MS = 5_000;

/**
 * The Mojang-compatible profile lookup (decisions.md §4):
 * `GET {IDENTITY_PROVIDER_URL}/session/minecraft/profile/{uuid without dashes}`.
 * 200 → the profile; 204/404 → null (no such account); no answer in 5 s or any other answer → 503.
 * No token of ours is ever sent there.
 */
@Injectable()
export class IdentityProviderClient {
  private readonly logger = new Logger('IdentityProvider');

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async lookup(uuid: string): Promise<IdentityProfile | null> {
    const url = `${this.config.identityProviderUrl}/session/minecraft/profile/${uuid.replace(/-/g, '').toLowerCase()}`;
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

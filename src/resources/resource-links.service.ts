import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { checkPackLink, checkResourceLink, LinkCheck, PackLinkCheck, signPackLink, signResourceLink } from './link-signature';
import { encodeResourcePath } from './resource-paths';
import { ResourcesRepository } from './resources.repository';

/**
 * Download addresses of resource files. They never carry a bearer token (interface.md): with
 * CDN_BASE_URL they point at the mirror, otherwise at this service's /resources/files route,
 * signed with an HMAC of the path and an expiry (downloads), or of the path and the file's SHA-1
 * (packs: valid while the pack is unchanged).
 */
@Injectable()
export class ResourceLinksService {
  private key: Promise<Buffer> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ResourcesRepository,
  ) {}

  async urlFor(path: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
    const encoded = encodeResourcePath(path);
    if (this.config.cdnBaseUrl !== null) return `${this.config.cdnBaseUrl}/${encoded}`;
    const expiresAt = nowSeconds + this.config.resourceLinkTtlSeconds;
    const signature = signResourceLink(await this.signingKey(), path, expiresAt);
    return `${this.config.assetServerUrl}/resources/files/${encoded}?expires=${expiresAt}&sig=${signature}`;
  }

  /**
   * The pack manifest's address of a pack: content-addressed by its SHA-1, without expiry (the
   * plugin hands it to players for as long as it runs). A new file gives a new address.
   */
  async packUrlFor(path: string, sha1: string): Promise<string> {
    const encoded = encodeResourcePath(path);
    if (this.config.cdnBaseUrl !== null) return `${this.config.cdnBaseUrl}/${encoded}`;
    const signature = signPackLink(await this.signingKey(), path, sha1);
    return `${this.config.assetServerUrl}/resources/files/${encoded}?v=${sha1}&sig=${signature}`;
  }

  async checkPack(path: string, version: unknown, signature: unknown): Promise<PackLinkCheck> {
    return checkPackLink(await this.signingKey(), path, version, signature);
  }

  async check(path: string, expires: unknown, signature: unknown): Promise<LinkCheck> {
    return checkResourceLink(await this.signingKey(), path, expires, signature, Math.floor(Date.now() / 1000));
  }

  /** Loaded once per process; a failed load (database down) is retried by the next call. */
  private signingKey(): Promise<Buffer> {
    this.key ??= this.repository.getOrCreateSigningKey(randomBytes(32).toString('hex')).then(
      (hex) => Buffer.from(hex, 'hex'),
      (error: unknown) => {
        this.key = null;
        throw error;
      },
    );
    return this.key;
  }
}

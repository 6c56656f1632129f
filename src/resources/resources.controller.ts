import { Body, Controller, Get, HttpCode, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { Public } from '../common/decorators/auth.decorators';
import { DownloadEntry } from './dto/download.dto';
import { ManifestQueryDto, ManifestResponse } from './dto/manifest.dto';
import { PackManifestEntry } from './dto/pack.dto';
import { ResourcePathsPipe } from './pipes/resource-paths.pipe';
import { ResourcesService } from './resources.service';

function header(request: Request, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The resource endpoints of interface.md (bearer server access token) and the signed file links. */
@Controller('resources')
export class ResourcesController {
  private readonly logger = new Logger('Resources');

  constructor(private readonly resources: ResourcesService) {}

  @Get('manifest')
  manifest(@Query() query: ManifestQueryDto): Promise<ManifestResponse> {
    return this.resources.manifest(query.lang === 'true');
  }

  @Post('down')
  @HttpCode(200)
  downloads(@Body(ResourcePathsPipe) paths: string[]): Promise<DownloadEntry[]> {
    return this.resources.downloads(paths);
  }

  @Get('packmanifest')
  packManifest(): Promise<PackManifestEntry[]> {
    return this.resources.packManifest();
  }

  /**
   * Target of the signed links handed out without CDN_BASE_URL. Public on purpose: the link's
   * HMAC and expiry are the credential, and tokens are never sent to download addresses.
   */
  @Get('files/*path')
  @Public()
  async file(
    @Param('path') segments: string[],
    @Query('expires') expires: unknown,
    @Query('sig') signature: unknown,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const file = await this.resources.openFile(segments.join('/'), expires, signature, {
      range: header(request, 'range'),
      ifRange: header(request, 'if-range'),
      ifNoneMatch: header(request, 'if-none-match'),
      headOnly: request.method === 'HEAD',
    });
    response.status(file.status).set(file.headers);
    if (file.stream === null) {
      response.end();
      return;
    }
    try {
      await pipeline(file.stream, response);
    } catch (error) {
      // A client that hangs up mid-download is routine; anything else is worth a line.
      if ((error as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.warn(`Streaming ${segments.join('/')} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

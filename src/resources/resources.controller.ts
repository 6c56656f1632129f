import { Body, Controller, Get, HttpCode, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPartialContentResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { sendPreparedJson } from '../common/http/prepared-json';
import { Public } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { DownloadEntry } from './dto/download.dto';
import { ManifestQueryDto, ManifestResponse } from './dto/manifest.dto';
import { PackManifestEntry } from './dto/pack.dto';
import { MAX_PATHS_PER_REQUEST, ResourcePathsPipe } from './pipes/resource-paths.pipe';
import { MAX_RESOURCE_PATH_LENGTH } from './resource-paths';
import { ResourcesService } from './resources.service';

function header(request: Request, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const SERVER_TOKEN_401 = 'Missing, unknown or expired server access token';

/** The resource endpoints of interface.md (bearer server access token) and the signed file links. */
@ApiTags(API_TAGS.resources)
@Controller('resources')
export class ResourcesController {
  private readonly logger = new Logger('Resources');

  constructor(private readonly resources: ResourcesService) {}

  @Get('manifest')
  @ApiOperation({
    summary: 'The resource manifest',
    description:
      'Every indexed file under data/ (and lang/ with lang=true) with its SHA-256, by path. Served from memory with an `ETag` (and ' +
      '`Cache-Control: no-cache`); a rescan on any instance is seen by the next request.',
  })
  @ApiOkResponse({ type: ManifestResponse })
  @ApiNotModifiedResponse({ description: '`If-None-Match` names the current ETag: no body' })
  @ApiErrors({ 400: { description: 'lang is neither true nor false', message: 'lang must be true or false' }, 401: SERVER_TOKEN_401 })
  async manifest(@Query() query: ManifestQueryDto, @Req() request: Request, @Res() response: Response): Promise<void> {
    sendPreparedJson(request, response, await this.resources.manifest(query.lang === 'true'));
  }

  @Post('down')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Download links for resource paths',
    description: 'One entry per distinct path, in request order. Every path must be in the manifest (Data or Lang).',
  })
  @ApiBody({
    description: 'Relative resource paths from the manifest',
    schema: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX_RESOURCE_PATH_LENGTH }, maxItems: MAX_PATHS_PER_REQUEST, example: ['data/songs/12/chart.json'] },
  })
  @ApiOkResponse({ type: [DownloadEntry] })
  @ApiErrors({
    400: {
      description: 'The body is not an array of strings, has too many paths, or a path is empty, absolute, has a ".." segment, a backslash or a control character',
      message: '[0] "../etc/passwd" must not contain a ".." segment',
    },
    401: SERVER_TOKEN_401,
    404: { description: 'Some paths are not in the manifest (the message lists them)', message: 'Unknown resource paths (1): "data/nope.json"' },
    413: 'The body is over 256 KiB',
  })
  downloads(@Body(ResourcePathsPipe) paths: string[]): Promise<DownloadEntry[]> {
    return this.resources.downloads(paths);
  }

  @Get('packmanifest')
  @ApiOperation({ summary: 'The resource-pack manifest', description: 'Described packs whose file is indexed, by name.' })
  @ApiOkResponse({ type: [PackManifestEntry] })
  @ApiErrors({ 401: SERVER_TOKEN_401 })
  packManifest(): Promise<PackManifestEntry[]> {
    return this.resources.packManifest();
  }

  /**
   * Target of the signed links handed out without CDN_BASE_URL. Public on purpose: the link's
   * HMAC and expiry are the credential, and tokens are never sent to download addresses.
   */
  @Get('files/*path')
  @Public()
  @ApiOperation({
    summary: 'A resource file (signed link)',
    description:
      'The target of the links POST /resources/down and the pack manifest hand out without CDN_BASE_URL. No token: the signature and expiry ' +
      'in the query are the credential. Supports HEAD, one byte range (Range, If-Range) and If-None-Match; the ETag is the quoted SHA-256.',
  })
  @ApiParam({ name: 'path', type: String, description: 'Relative resource path; may contain / (data/songs/12/chart.json)' })
  @ApiQuery({ name: 'expires', required: false, description: 'Download links: expiry of the link, epoch seconds', schema: { type: 'integer' } })
  @ApiQuery({
    name: 'v',
    required: false,
    description: "Pack links: the pack file's SHA-1; the link has no expiry and works while the pack is unchanged",
    schema: { type: 'string', pattern: '^[0-9a-f]{40}$' },
  })
  @ApiQuery({ name: 'sig', required: true, description: 'HMAC-SHA256 of expiry and path (downloads) or of SHA-1 and path (packs), base64url', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } })
  @ApiHeader({ name: 'Range', required: false, description: 'One byte range, e.g. bytes=0-1023' })
  @ApiHeader({ name: 'If-Range', required: false, description: 'The ETag the client holds; the range applies only if it still matches' })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'ETags the client holds; a match answers 304' })
  @ApiOkResponse({ description: 'The whole file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } })
  @ApiPartialContentResponse({ description: 'The requested byte range (Content-Range)', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } })
  @ApiNotModifiedResponse({ description: 'If-None-Match matched the ETag' })
  @ApiErrors({
    403: { description: 'The signature is missing, malformed, wrong, or the link has expired', message: 'The link has expired' },
    404: {
      description: 'The file is not in the index, changed on disk since it was indexed, or (pack link) the pack changed since the link was issued',
      message: 'Resource "data/songs/12/chart.json" is not in the index',
    },
    416: 'The range lies outside the file (Content-Range: bytes */size)',
  })
  async file(
    @Param('path') segments: string[],
    @Query('expires') expires: unknown,
    @Query('v') version: unknown,
    @Query('sig') signature: unknown,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const file = await this.resources.openFile(segments.join('/'), { expires, version, signature }, {
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

import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { Audited, pathId } from '../audit/audited.decorator';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { serialCursorKey, ListQueryDto, listQuery, ListSpec } from '../common/pagination/list-query';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { API_TAGS } from '../openapi/api-tags';
import { API_KEY_LIST, ApiKeyService } from './api-key.service';
import { ApiKeyPage, ApiKeyResponse, CreateApiKeyDto, CreatedApiKeyResponse, UpdateApiKeyDto } from './dto/api-key.dto';

const KEYS: ListSpec = { list: API_KEY_LIST, cursorKey: serialCursorKey };
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
const idPipe = new ParseIntIdPipe('id');
const keyTarget = (input: Parameters<typeof pathId>[0]) => `api-key:${pathId(input, 'id')}`;

/** Staff manage the public API's keys (docs/decisions.md "Public API"): one per integration, shown once. */
@ApiTags(API_TAGS.admin)
@Controller('admin/api-keys')
@AdminAuth()
@Permission('api-keys.manage')
export class ApiKeyAdminController {
  constructor(private readonly keys: ApiKeyService) {}

  @Get()
  @ApiOperation({
    summary: 'The public API keys',
    description: 'By id ascending, revoked keys included; never the keys themselves (only their SHA-256 is stored).',
  })
  @ApiOkResponse({ type: ApiKeyPage })
  @ApiErrors({
    400: {
      description: 'limit or cursor is invalid, or the query has an unknown parameter',
      message: 'limit must be an integer from 1 to 200',
    },
  })
  list(@Query() query: ListQueryDto): Promise<ApiKeyPage> {
    return this.keys.list(listQuery(query, KEYS));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a public API key',
    description:
      'Named, with its scopes and optionally its own limit of calls a minute. The answer holds the key: it is shown only there.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors({
    400: {
      description: 'A body field is missing or invalid',
      message: 'scopes must be a non-empty list of distinct scopes among read:boards, read:players',
    },
    413: 'The body is over 256 KiB',
  })
  @Audited('api-key.create', ({ result }) => `api-key:${(result as CreatedApiKeyResponse).id}`)
  create(@Body() body: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    return this.keys.create(body);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change a key',
    description:
      'Its name, scopes or limit (null: back to PUBLIC_API_KEY_RATE_LIMIT); fields left out stay. Every instance applies it at once.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors({
    400: { description: `${ID_400.description}, or a body field is invalid`, message: ID_400.message },
    404: { description: 'No live key with this id (unknown or revoked)', message: 'No live API key with id 3' },
    413: 'The body is over 256 KiB',
  })
  @Audited('api-key.update', keyTarget)
  update(@Param('id', idPipe) id: number, @Body() body: UpdateApiKeyDto): Promise<ApiKeyResponse> {
    return this.keys.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke a key',
    description:
      'Every instance refuses it at once (within 30 s where the event bus is down); its record stays. Revoking twice is 204.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiNoContentResponse({ description: 'The key no longer works' })
  @ApiErrors({ 400: ID_400, 404: { description: 'No key with this id', message: 'No API key with id 3' } })
  @Audited('api-key.revoke', keyTarget, () => ({}))
  revoke(@Param('id', idPipe) id: number): Promise<void> {
    return this.keys.revoke(id);
  }
}

import { NoQuery } from '../common/decorators/no-query.decorator';
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
import { OptionalBody } from '../common/decorators/optional-body.decorator';
import { listQuery, ListSpec } from '../common/pagination/list-query';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { API_TAGS } from '../openapi/api-tags';
import {
  CreatedWebhookResponse,
  CreateWebhookDto,
  RotatedWebhookSecretResponse,
  RotateWebhookSecretDto,
  UpdateWebhookDto,
  WebhookDeliveriesQueryDto,
  WebhookDeliveryPage,
  WebhookList,
  WebhookResponse,
} from './dto/webhook.dto';
import { DEFAULT_SECRET_OVERLAP_SECONDS, DELIVERY_LIST, WebhookService } from './webhook.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DELIVERIES: ListSpec = { list: DELIVERY_LIST, cursorKey: (key) => UUID.test(key) };
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
const NOT_FOUND = { description: 'No webhook with this id', message: 'No webhook with id 3' };
const idPipe = new ParseIntIdPipe('id');
const target = (input: Parameters<typeof pathId>[0]) => `webhook:${pathId(input, 'id')}`;
/** What the audit row keeps of a webhook write: never the secret, never the URL (it may hold a token). */
const summary = ({ body }: { body: unknown }) => {
  const { name, events, format, atpTop, enabled } = (body ?? {}) as Record<string, unknown>;
  return { name, events, format, atpTop, enabled, urlChanged: (body as { url?: unknown } | null)?.url !== undefined };
};

/** Staff manage outgoing webhooks (docs/decisions.md "Webhooks"); their secret is shown once. */
@ApiTags(API_TAGS.admin)
@Controller('admin/webhooks')
@AdminAuth()
@Permission('webhooks.manage')
export class WebhookAdminController {
  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  @ApiOperation({
    summary: 'The webhooks',
    description: 'By id, with their pending and given-up deliveries; never the secrets.',
  })
  @ApiOkResponse({ type: WebhookList })
  list(@NoQuery() _query: void): Promise<WebhookList> {
    return this.webhooks.list();
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register a webhook',
    description: 'The answer holds the signing secret: it is shown only there.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookResponse })
  @ApiErrors({
    400: {
      description: 'A body field is missing or invalid, or the URL names a refused address',
      message: 'url: 127.0.0.1 is a loopback address (WEBHOOK_ALLOWED_NETWORKS does not allow it)',
    },
    413: 'The body is over 256 KiB',
  })
  @Audited('webhook.create', ({ result }) => `webhook:${(result as CreatedWebhookResponse).id}`, summary)
  create(@Body() body: CreateWebhookDto): Promise<CreatedWebhookResponse> {
    return this.webhooks.create(body);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change a webhook',
    description: 'Fields left out stay; `enabled: true` turns a webhook the service turned off on again.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors({
    400: { description: `${ID_400.description}, or a body field is invalid`, message: ID_400.message },
    404: NOT_FOUND,
    413: 'The body is over 256 KiB',
  })
  @Audited('webhook.update', target, summary)
  update(@Param('id', idPipe) id: number, @Body() body: UpdateWebhookDto): Promise<WebhookResponse> {
    return this.webhooks.update(id, body);
  }

  @Post(':id/secret')
  @HttpCode(201)
  @ApiOperation({
    summary: "Rotate a webhook's secret",
    description:
      'The answer holds the new secret: it is shown only there. The replaced secret keeps signing beside it (a second signature in X-Rhythmc-Signature) for overlapSeconds, default a day, so that receivers can take the new one without refusing a delivery.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiCreatedResponse({ type: RotatedWebhookSecretResponse })
  @ApiErrors({
    400: { description: `${ID_400.description}, or overlapSeconds is invalid`, message: ID_400.message },
    404: NOT_FOUND,
    413: 'The body is over 256 KiB',
  })
  @Audited('webhook.secret', target, ({ body }) => ({
    overlapSeconds: (body as RotateWebhookSecretDto | null)?.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS,
  }))
  @OptionalBody(RotateWebhookSecretDto)
  rotateSecret(
    @Param('id', idPipe) id: number,
    @Body() body: RotateWebhookSecretDto,
  ): Promise<RotatedWebhookSecretResponse> {
    return this.webhooks.rotateSecret(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a webhook',
    description: 'With its delivery log; deliveries not yet sent are dropped.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({ 400: ID_400, 404: NOT_FOUND })
  @Audited('webhook.delete', target, () => ({}))
  remove(@Param('id', idPipe) id: number): Promise<void> {
    return this.webhooks.remove(id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: "A webhook's delivery log",
    description: 'Newest first: state, attempts, the last status and error, the event data.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiOkResponse({ type: WebhookDeliveryPage })
  @ApiErrors({ 400: ID_400, 404: NOT_FOUND })
  deliveries(@Param('id', idPipe) id: number, @Query() query: WebhookDeliveriesQueryDto): Promise<WebhookDeliveryPage> {
    return this.webhooks.deliveries(id, listQuery(query, DELIVERIES));
  }
}

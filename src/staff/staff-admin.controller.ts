import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Audited, AuditInput, pathId } from '../audit/audited.decorator';
import { AdminAuth, CurrentAdmin, Permission } from '../auth/auth.decorators';
import type { AdminCaller } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { serialCursorKey, ListQueryDto, listQuery, ListSpec } from '../common/pagination/list-query';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { API_TAGS } from '../openapi/api-tags';
import { CreateStaffDto, StaffAccountDetail, StaffAccountResponse, StaffPage, UpdateStaffDto } from './dto/staff.dto';
import { STAFF_LIST, StaffService } from './staff.service';

const STAFF: ListSpec = { list: STAFF_LIST, cursorKey: serialCursorKey };
const idPipe = new ParseIntIdPipe('id');
const tokenIdPipe = new ParseIntIdPipe('tokenId');
const ID_PARAM = { name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } } as const;
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
const NO_ACCOUNT_404 = { description: 'No staff account with this id', message: 'No staff account with id 3' };
const LAST_OWNER_409 = {
  description: 'It is the last enabled owner',
  code: 'CONFLICT',
  message: 'alice is the last enabled owner: make another account owner first',
} as const;
const staffTarget = (input: AuditInput) => `staff:${pathId(input, 'id')}`;

/** Only owners manage staff (the `staff.manage` permission). */
@ApiTags(API_TAGS.admin)
@Controller('admin/staff')
@AdminAuth()
@Permission('staff.manage')
export class StaffAdminController {
  constructor(private readonly staff: StaffService) {}

  @Get()
  @ApiOperation({ summary: 'Staff accounts', description: 'By id, disabled ones included.' })
  @ApiOkResponse({ type: StaffPage })
  @ApiErrors({
    400: {
      description: 'limit or cursor is invalid, or the query has an unknown parameter',
      message: 'limit must be an integer from 1 to 200',
    },
  })
  list(@Query() query: ListQueryDto): Promise<StaffPage> {
    return this.staff.list(listQuery(query, STAFF));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add a staff account',
    description:
      'With a first password the person changes after signing in (PUT /admin/me/password). From a console session or with ADMIN_TOKEN, not with a personal API token.',
  })
  @ApiCreatedResponse({ type: StaffAccountResponse })
  @ApiErrors({
    400: { description: 'A field is invalid, or the name is taken', message: 'name alice is taken' },
    403: 'A personal API token: accounts are created from a console session or with ADMIN_TOKEN',
    413: 'The body is over 256 KiB',
  })
  @Audited(
    'staff.create',
    ({ result }) => `staff:${(result as StaffAccountResponse).id}`,
    ({ result }) => ({ name: (result as StaffAccountResponse).name, role: (result as StaffAccountResponse).role }),
  )
  create(@CurrentAdmin() caller: AdminCaller, @Body() body: CreateStaffDto): Promise<StaffAccountResponse> {
    return this.staff.create(caller, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One staff account', description: 'With its personal API tokens and live sessions.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: StaffAccountDetail })
  @ApiErrors({ 400: ID_400, 404: NO_ACCOUNT_404 })
  get(@Param('id', idPipe) id: number): Promise<StaffAccountDetail> {
    return this.staff.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change a staff account',
    description:
      'Its role (from its next request on), disabled (ends its sessions and revokes its tokens at once), password (a reset: ends its sessions) or secondFactor false (turns its authenticator code off, for a lost phone). Fields left out stay. password and secondFactor: not on your own account (PUT /admin/me/password, DELETE /admin/me/totp), and not with a personal API token.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: StaffAccountResponse })
  @ApiErrors({
    400: { description: `${ID_400.description}, or a body field is invalid or none is given`, message: ID_400.message },
    403: 'password or secondFactor on your own account, or with a personal API token',
    404: NO_ACCOUNT_404,
    409: LAST_OWNER_409,
    413: 'The body is over 256 KiB',
  })
  @Audited('staff.update', staffTarget, ({ body }) => {
    const { role, disabled, password, secondFactor } = body as UpdateStaffDto;
    return { role, disabled, password: password === undefined ? undefined : 'reset', secondFactor };
  })
  update(
    @CurrentAdmin() caller: AdminCaller,
    @Param('id', idPipe) id: number,
    @Body() body: UpdateStaffDto,
  ): Promise<StaffAccountResponse> {
    return this.staff.update(caller, id, body);
  }

  @Delete(':id')
  @ApiOperation({
    summary: 'Delete a staff account',
    description:
      'With its sessions and tokens, at once. Its audit entries stay and keep its name. Answers the deleted account.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: StaffAccountResponse })
  @ApiErrors({ 400: ID_400, 404: NO_ACCOUNT_404, 409: LAST_OWNER_409 })
  @Audited('staff.delete', staffTarget, ({ result }) => ({ name: (result as StaffAccountResponse).name }))
  delete(@Param('id', idPipe) id: number): Promise<StaffAccountResponse> {
    return this.staff.delete(id);
  }

  @Delete(':id/tokens/:tokenId')
  @HttpCode(204)
  @ApiOperation({ summary: "Revoke a staff member's personal API token", description: 'It stops working at once.' })
  @ApiParam(ID_PARAM)
  @ApiParam({ name: 'tokenId', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors({
    400: ID_400,
    404: { description: 'The account has no token with this id', message: 'No token 7 of staff account 3' },
  })
  @Audited(
    'staff.token-revoke',
    (input) => `staff-token:${pathId(input, 'tokenId')}`,
    (input) => ({
      account: Number(pathId(input, 'id')),
    }),
  )
  revokeToken(@Param('id', idPipe) id: number, @Param('tokenId', tokenIdPipe) tokenId: number): Promise<void> {
    return this.staff.revokeToken(id, tokenId);
  }
}

import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Audited, pathId } from '../audit/audited.decorator';
import { AdminAuth, CurrentAdmin, Permission } from '../auth/auth.decorators';
import type { AdminCaller } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { API_TAGS } from '../openapi/api-tags';
import { CreatedStaffTokenResponse, CreateStaffTokenDto, StaffTokenList } from './dto/staff.dto';
import { StaffService } from './staff.service';

const idPipe = new ParseIntIdPipe('id');
const NOT_A_STAFF_403 = 'ADMIN_TOKEN, which belongs to no staff account';

/** A staff member's own personal API tokens, for the CLI and scripts. */
@ApiTags(API_TAGS.admin)
@Controller('admin/me/tokens')
@AdminAuth()
@Permission('account.self')
export class StaffTokenController {
  constructor(private readonly staff: StaffService) {}

  @Get()
  @ApiOperation({
    summary: 'Your personal API tokens',
    description: 'With their last use; never the tokens themselves.',
  })
  @ApiOkResponse({ type: StaffTokenList })
  @ApiErrors({ 403: NOT_A_STAFF_403 })
  list(@CurrentAdmin() caller: AdminCaller): Promise<StaffTokenList> {
    return this.staff.ownTokens(caller);
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a personal API token',
    description:
      "From a console session. It carries your role or a lower one (and never more than your account's, read at every call). The answer holds the token: it is shown only there.",
  })
  @ApiCreatedResponse({ type: CreatedStaffTokenResponse })
  @ApiErrors({
    400: {
      description: 'A field is invalid, the role is above yours, or 50 tokens are held',
      message: 'role must be at most your own (moderator)',
    },
    403: `${NOT_A_STAFF_403}, or a personal API token (tokens are created from a console session)`,
    413: 'The body is over 256 KiB',
  })
  @Audited(
    'staff.token-create',
    ({ result }) => `staff-token:${(result as CreatedStaffTokenResponse).id}`,
    ({ result }) => ({
      name: (result as CreatedStaffTokenResponse).name,
      role: (result as CreatedStaffTokenResponse).role,
    }),
  )
  create(@CurrentAdmin() caller: AdminCaller, @Body() body: CreateStaffTokenDto): Promise<CreatedStaffTokenResponse> {
    return this.staff.createOwnToken(caller, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke one of your personal API tokens', description: 'It stops working at once.' })
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors({
    400: { description: 'id is not a positive integer', message: 'id must be a positive integer' },
    403: NOT_A_STAFF_403,
    404: { description: 'You hold no token with this id', message: 'No token 7 of staff account 3' },
  })
  @Audited('staff.token-revoke', (input) => `staff-token:${pathId(input, 'id')}`, () => ({}))
  revoke(@CurrentAdmin() caller: AdminCaller, @Param('id', idPipe) id: number): Promise<void> {
    return this.staff.revokeOwnToken(caller, id);
  }
}

import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth } from './auth.decorators';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { API_TAGS } from '../openapi/api-tags';
import { CredentialService } from './credential.service';
import { BootstrapTokenResponse } from './dto/bootstrap-token.response';
import { Audited, pathId } from '../audit/audited.decorator';

/** Credential administration (decisions.md §8). */
@ApiTags(API_TAGS.admin)
@Controller('admin')
@AdminAuth()
export class AuthController {
  constructor(private readonly credentials: CredentialService) {}

  @Post('servers/:serverID/bootstrap-token')
  @HttpCode(201)
  @ApiOperation({ summary: "Rotate a server's bootstrap token", description: 'The old token stops working; live sessions stay.' })
  @ApiParam({ name: 'serverID', schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })
  @ApiCreatedResponse({ type: BootstrapTokenResponse })
  @ApiErrors({
    400: 'serverID is not a positive integer',
    404: { description: 'No server with this serverID, or the admin API is disabled', code: 'NOT_FOUND', message: 'No server with serverID 7' },
  })
  @Audited('server.bootstrap-token', (input) => `server:${pathId(input, 'serverID')}`, () => ({}))
  async rotateBootstrapToken(@Param('serverID', new ParseIntIdPipe('serverID')) serverId: number): Promise<BootstrapTokenResponse> {
    return { bootstrapToken: await this.credentials.issueBootstrapToken(serverId) };
  }
}

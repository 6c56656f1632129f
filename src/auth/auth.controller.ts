import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { ParseIntIdPipe } from '../common/pipes/parse-id.pipe';
import { AuthService } from './auth.service';
import { BootstrapTokenResponse } from './dto/bootstrap-token.response';

/** Credential administration (decisions.md §8). */
@Controller('admin')
@AdminAuth()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('servers/:serverID/bootstrap-token')
  @HttpCode(201)
  async rotateBootstrapToken(@Param('serverID', new ParseIntIdPipe('serverID')) serverId: number): Promise<BootstrapTokenResponse> {
    return { bootstrapToken: await this.auth.issueBootstrapToken(serverId) };
  }
}

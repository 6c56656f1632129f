import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { API_TAGS } from '../openapi/api-tags';
import { AdminOverviewResponse } from './dto/overview.dto';
import { OverviewService } from './overview.service';

@ApiTags(API_TAGS.admin)
@Controller('admin/overview')
@AdminAuth()
export class OverviewController {
  constructor(private readonly overviews: OverviewService) {}

  @Get()
  @Permission('overview.read')
  @ApiOperation({
    summary: 'The network at a glance',
    description:
      'Servers and players online (live sessions), score uploads of the last minute and 15 minutes, maintenance and the plugin policy in force.',
  })
  @ApiOkResponse({ type: AdminOverviewResponse })
  @ApiErrors({})
  overview(): Promise<AdminOverviewResponse> {
    return this.overviews.overview();
  }
}

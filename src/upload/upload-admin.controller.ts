import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { API_TAGS } from '../openapi/api-tags';
import { RecomputeResponse } from './dto/upload.response';
import { RatingRecomputeService } from './recompute/rating-recompute.service';
import { Audited } from '../audit/audited.decorator';

@ApiTags(API_TAGS.admin)
@Controller('admin/ratings')
@AdminAuth()
export class UploadAdminController {
  constructor(private readonly recomputer: RatingRecomputeService) {}

  /** Recomputes every player's bests and ATP from the stored records (after chart constants change). */
  @Post('recompute')
  @Permission('ratings.recompute')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Recompute every rating',
    description: "Every player's bests and ATP from the stored records, after chart constants changed. No body.",
  })
  @ApiOkResponse({ type: RecomputeResponse })
  @ApiErrors({})
  @Audited('ratings.recompute', () => 'ratings:all', ({ result }) => ({ ...(result as RecomputeResponse) }))
  recompute(): Promise<RecomputeResponse> {
    return this.recomputer.recomputeAll();
  }
}

import { Controller, HttpCode, Post } from '@nestjs/common';
import { AdminAuth } from '../common/decorators/auth.decorators';
import { RecomputeResponse } from './dto/upload.response';
import { UploadService } from './upload.service';

@Controller('admin/ratings')
@AdminAuth()
export class UploadAdminController {
  constructor(private readonly uploads: UploadService) {}

  /** Recomputes every player's bests and ATP from the stored records (after chart constants change). */
  @Post('recompute')
  @HttpCode(200)
  recompute(): Promise<RecomputeResponse> {
    return this.uploads.recompute();
  }
}

import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import type { ServerSessionContext } from '../auth/auth.types';
import { CurrentServer } from '../common/decorators/auth.decorators';
import { UploadRecordDto } from './dto/upload-record.dto';
import { UploadResponse } from './dto/upload.response';
import { UploadService } from './upload.service';

/** Score upload of the game server; needs the server access token. */
@Controller('player')
export class UploadController {
  constructor(private readonly uploads: UploadService) {}

  @Post('upload')
  @HttpCode(200)
  upload(@CurrentServer() server: ServerSessionContext, @Body() body: UploadRecordDto): Promise<UploadResponse> {
    return this.uploads.upload(server, body);
  }
}

import { Module } from '@nestjs/common';
import { RetentionRepository } from './retention.repository';
import { RetentionService } from './retention.service';

/** Purges of old rows (retention.map.ts), run by every instance on a timer, one run per table at a time. */
@Module({
  providers: [RetentionRepository, RetentionService],
  exports: [RetentionService],
})
export class RetentionModule {}

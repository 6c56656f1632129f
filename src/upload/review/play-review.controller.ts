import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../../auth/auth.decorators';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { QueryEnum } from '../../common/decorators/query-enum.decorator';
import { QueryInt } from '../../common/decorators/query-int.decorator';
import { ParseBigIdPipe } from '../../common/pipes/parse-id.pipe';
import { SCORE_CHECK_NAMES } from '../../config/app-config';
import { API_TAGS } from '../../openapi/api-tags';
import { PlayListResponse, PlayResponse, VoidPlayDto } from '../dto/play-review.dto';
import { PlayReviewService } from './play-review.service';
import { REVIEW_STATES, ReviewState } from './play-review.types';

export const PLAYS_MAX_LIMIT = 200;
const idPipe = new ParseBigIdPipe('id');
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
const NO_PLAY_404 = { description: 'No play with this id, or the admin API is disabled', message: 'No play with id 4821' };

@ApiTags(API_TAGS.admin)
@Controller('admin/plays')
@AdminAuth()
export class PlayReviewController {
  constructor(private readonly review: PlayReviewService) {}

  @Get()
  @ApiOperation({ summary: 'List stored plays for review', description: 'Newest first; `state` flagged (default: waiting for review), approved, voided or all.' })
  @ApiQuery({ name: 'state', required: false, schema: { type: 'string', enum: [...REVIEW_STATES], default: 'flagged' } })
  @ApiQuery({ name: 'check', required: false, description: 'Only plays that failed this check', schema: { type: 'string', enum: [...SCORE_CHECK_NAMES] } })
  @ApiQuery({ name: 'uid', required: false, description: "Only this player's plays", schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: PLAYS_MAX_LIMIT, default: 50 } })
  @ApiQuery({ name: 'before', required: false, description: 'Only plays with a smaller id (nextBefore of the previous page)', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayListResponse })
  @ApiErrors({ 400: { description: 'A filter is not one of its values', message: 'state must be one of flagged, approved, voided, all' } })
  list(
    @QueryEnum({ name: 'state', values: REVIEW_STATES, default: 'flagged' }) state: ReviewState,
    @QueryEnum({ name: 'check', values: SCORE_CHECK_NAMES }) check: string | undefined,
    @QueryInt({ name: 'uid', min: 1, max: Number.MAX_SAFE_INTEGER }) uid: number | undefined,
    @QueryInt({ name: 'limit', min: 1, max: PLAYS_MAX_LIMIT, default: 50 }) limit: number,
    @QueryInt({ name: 'before', min: 1, max: Number.MAX_SAFE_INTEGER }) before: number | undefined,
  ): Promise<PlayListResponse> {
    return this.review.list({ state, check, uid: uid === undefined ? undefined : String(uid), limit, before });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One stored play' })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({ 400: ID_400, 404: NO_PLAY_404 })
  get(@Param('id', idPipe) id: string): Promise<PlayResponse> {
    return this.review.get(id);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({ summary: 'Approve a flagged play', description: "It enters bests, ATP and ranks as if it had counted when it was accepted; its player's ratings are recomputed in the same transaction." })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({ 400: { description: 'id is not a positive integer, or the play failed no check', message: 'Play 4821 failed no check: there is nothing to approve' }, 404: NO_PLAY_404 })
  approve(@Param('id', idPipe) id: string): Promise<PlayResponse> {
    return this.review.approve(id);
  }

  @Post(':id/void')
  @HttpCode(200)
  @ApiOperation({ summary: 'Void a play', description: "It counts for nothing: its player's bests and ATP, and every rank they touch, are recomputed in one transaction. Voiding a voided play changes nothing." })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({ 400: { description: 'id is not a positive integer, or reason is not a string of at most 200 characters', message: 'reason must be shorter than or equal to 200 characters' }, 404: NO_PLAY_404, 413: 'The body is over 256 KiB' })
  void(@Param('id', idPipe) id: string, @Body() body: VoidPlayDto): Promise<PlayResponse> {
    return this.review.void(id, body.reason ?? null);
  }

  @Post(':id/restore')
  @HttpCode(200)
  @ApiOperation({ summary: 'Restore a voided play', description: 'It counts again as before it was voided (a flagged play still waits for approval).' })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({ 400: ID_400, 404: NO_PLAY_404 })
  restore(@Param('id', idPipe) id: string): Promise<PlayResponse> {
    return this.review.restore(id);
  }
}

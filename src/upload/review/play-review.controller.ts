import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../../auth/auth.decorators';
import { AuditInput, Audited, pathId } from '../../audit/audited.decorator';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { OptionalBody } from '../../common/decorators/optional-body.decorator';
import { bigSerialCursorKey, listQuery, ListSpec } from '../../common/pagination/list-query';
import { ParseBigIdPipe } from '../../common/pipes/parse-id.pipe';
import { API_TAGS } from '../../openapi/api-tags';
import { PlayDetailResponse, PlayListQueryDto, PlayPage, PlayResponse, VoidPlayDto } from '../dto/play-review.dto';
import { PLAYS_LIST, PlayReviewService } from './play-review.service';

const PLAYS: ListSpec = { list: PLAYS_LIST, cursorKey: bigSerialCursorKey };
const idPipe = new ParseBigIdPipe('id');
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
/** Audit target and summary of a review action: the play, and whose play on which chart. */
const playTarget = (input: AuditInput) => `play:${pathId(input, 'id')}`;
const playSummary = ({ result, body }: AuditInput): Record<string, unknown> => {
  const play = result as PlayResponse;
  const reason = (body as VoidPlayDto | undefined)?.reason;
  return { uid: play.uid, levelId: play.levelId, review: play.review, ...(reason !== undefined ? { reason } : {}) };
};
const NO_PLAY_404 = {
  description: 'No play with this id, or the admin API is disabled',
  message: 'No play with id 4821',
};

@ApiTags(API_TAGS.admin)
@Controller('admin/plays')
@AdminAuth()
export class PlayReviewController {
  constructor(private readonly review: PlayReviewService) {}

  @Get()
  @Permission('plays.read')
  @ApiOperation({
    summary: 'List stored plays for review',
    description:
      'Newest first; `state` flagged (default: waiting for review), approved, voided or all. Paged like every admin list.',
  })
  @ApiOkResponse({ type: PlayPage })
  @ApiErrors({
    400: {
      description: 'limit, cursor or a filter is invalid, or the query has an unknown parameter',
      message: 'state must be one of flagged, approved, voided, all',
    },
  })
  list(@Query() query: PlayListQueryDto): Promise<PlayPage> {
    return this.review.list(listQuery(query, PLAYS));
  }

  @Get(':id')
  @Permission('plays.read')
  @ApiOperation({
    summary: 'One stored play',
    description: 'With its judgement counts, combo, and when it was played (sent) and received.',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayDetailResponse })
  @ApiErrors({ 400: ID_400, 404: NO_PLAY_404 })
  get(@Param('id', idPipe) id: string): Promise<PlayDetailResponse> {
    return this.review.get(id);
  }

  @Post(':id/approve')
  @Permission('plays.review')
  @HttpCode(200)
  @Audited('play.approve', playTarget, playSummary)
  @ApiOperation({
    summary: 'Approve a flagged play',
    description:
      "It enters bests, ATP and ranks as if it had counted when it was accepted; its player's ratings are recomputed in the same transaction.",
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({
    400: {
      description: 'id is not a positive integer, or the play failed no check',
      message: 'Play 4821 failed no check: there is nothing to approve',
    },
    404: NO_PLAY_404,
  })
  approve(@Param('id', idPipe) id: string): Promise<PlayResponse> {
    return this.review.approve(id);
  }

  @Post(':id/void')
  @Permission('plays.review')
  @HttpCode(200)
  @Audited('play.void', playTarget, playSummary)
  @ApiOperation({
    summary: 'Void a play',
    description:
      "It counts for nothing: its player's bests and ATP, and every rank they touch, are recomputed in one transaction. Voiding a voided play changes nothing.",
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({
    400: {
      description: 'id is not a positive integer, or reason is not a string of at most 200 characters',
      message: 'reason must be shorter than or equal to 200 characters',
    },
    404: NO_PLAY_404,
    413: 'The body is over 256 KiB',
  })
  @OptionalBody(VoidPlayDto)
  void(@Param('id', idPipe) id: string, @Body() body: VoidPlayDto): Promise<PlayResponse> {
    return this.review.void(id, body.reason ?? null);
  }

  @Post(':id/restore')
  @Permission('plays.review')
  @HttpCode(200)
  @Audited('play.restore', playTarget, playSummary)
  @ApiOperation({
    summary: 'Restore a voided play',
    description: 'It counts again as before it was voided (a flagged play still waits for approval).',
  })
  @ApiParam({ name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } })
  @ApiOkResponse({ type: PlayResponse })
  @ApiErrors({ 400: ID_400, 404: NO_PLAY_404 })
  restore(@Param('id', idPipe) id: string): Promise<PlayResponse> {
    return this.review.restore(id);
  }
}

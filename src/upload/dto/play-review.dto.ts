import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { SCORE_CHECK_NAMES } from '../../config/app-config';
import { BigIdFilter, ListQueryDto, OneOfFilter } from '../../common/pagination/list-query';
import { IsText } from '../../common/validation/is-text';
import { REVIEW_STATES, type ReviewState } from '../review/play-review.types';

/** GET /admin/plays. */
export class PlayListQueryDto extends ListQueryDto {
  @OneOfFilter(REVIEW_STATES, 'flagged (default), approved, voided or all', 'flagged')
  state?: ReviewState;

  @OneOfFilter(SCORE_CHECK_NAMES, 'Only plays that failed this check')
  check?: string;

  @BigIdFilter("Only this player's plays")
  uid?: string;
}

/** Body of POST /admin/plays/{id}/void (optional). */
export class VoidPlayDto {
  @ApiPropertyOptional({
    type: String,
    maxLength: 200,
    description: 'Why, kept with the play and in the audit log',
    example: 'Replay shows a macro',
  })
  @IsOptional()
  @IsString()
  @IsText(200)
  reason?: string;
}

/** A stored play as the review API shows it. */
export class PlayResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 4821 })
  id!: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'Steve' })
  username!: string;

  @ApiProperty({ type: 'integer', example: 12 })
  levelId!: number;

  @ApiProperty({ type: Number, example: 99.5 })
  acc!: number;

  @ApiProperty({ type: Boolean, example: true })
  pass!: boolean;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: "payload.time: the play's identity with uid and levelId, epoch ms",
    example: 1795600000000,
  })
  time!: number;

  @ApiProperty({
    type: String,
    description: 'When the service accepted it (local date-time): ties on a chart go to the earliest',
    example: '2026-11-25T18:02:11',
  })
  receivedAt!: string;

  @ApiProperty({ type: 'integer', example: 3 })
  serverID!: number;

  @ApiProperty({
    type: [String],
    enum: SCORE_CHECK_NAMES,
    description: 'The consistency checks it failed on arrival',
    example: ['maxCombo'],
  })
  flags!: string[];

  @ApiProperty({
    type: String,
    enum: ['none', 'flagged', 'approved', 'voided'],
    description:
      'none: no failed check; flagged: waiting for review; approved: counts despite its flags; voided: counts for nothing',
    example: 'flagged',
  })
  review!: 'none' | 'flagged' | 'approved' | 'voided';

  @ApiProperty({ type: String, nullable: true, example: null })
  voidReason!: string | null;

  @ApiProperty({
    type: Boolean,
    description:
      'Whether it counts towards bests, ATP and ranks now (passed, not flagged or approved, not voided, on a chart that is not a placeholder)',
    example: false,
  })
  counts!: boolean;
}

/** A page of GET /admin/plays (the admin lists' paging: `limit`, opaque `cursor`). */
export class PlayPage {
  @ApiProperty({ type: [PlayResponse], description: 'Newest first, at most `limit`' })
  items!: PlayResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next (older) page; null on the last page',
    example: 'cGxheXM6NDc5MA',
  })
  nextCursor!: string | null;
}

export class JudgedNotes {
  @ApiProperty({ type: 'integer', example: 311 })
  perfect!: number;

  @ApiProperty({ type: 'integer', example: 4 })
  great!: number;

  @ApiProperty({ type: 'integer', example: 0 })
  miss!: number;
}

export class PlayJudgements {
  @ApiProperty({ type: JudgedNotes })
  tap!: JudgedNotes;

  @ApiProperty({ type: JudgedNotes })
  hold!: JudgedNotes;

  @ApiProperty({ type: JudgedNotes })
  dodge!: JudgedNotes;

  @ApiProperty({ type: JudgedNotes })
  look!: JudgedNotes;
}

/** GET /admin/plays/{id}: the play with what a reviewer weighs beside its flags. */
export class PlayDetailResponse extends PlayResponse {
  @ApiProperty({ type: PlayJudgements, description: 'The judgement counts as sent (tapStats, holdStats, …)' })
  judgements!: PlayJudgements;

  @ApiProperty({ type: 'integer', example: 355 })
  maxCombo!: number;

  @ApiProperty({ type: Boolean, example: false })
  fullCombo!: boolean;

  @ApiProperty({ type: Boolean, example: false })
  allPerfect!: boolean;

  @ApiProperty({
    type: String,
    description: "When it was played: payload.time as a local date-time (the game server's clock)",
    example: '2026-11-25T18:01:58',
  })
  sentAt!: string;

  @ApiProperty({ type: String, description: 'The game server it came from, as it named itself', example: 'lobby-1' })
  serverName!: string;
}

import { ApiProperty } from '@nestjs/swagger';
import { ADMIN_TOKEN_ACTOR, STAFF_NAME_PATTERN } from '../../auth/auth.types';
import { ListQueryDto, TextFilter } from '../../common/pagination/list-query';

/**
 * `kind:rest`; the rest is what the write named: an id, or a pack's name (any text of up to 128
 * characters but NUL, spaces and letters of any script included), so only control characters are
 * refused. Counted in code points, as the names are.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what the filter refuses
const TARGET = /^[a-z][a-z-]*:[^\x00-\x1f\x7f-\x9f]{1,150}$/u;
const ACTION = /^[a-z][a-z-]*(\.[a-z][a-z-]*)+$/;
/** A staff account's name, `ADMIN_TOKEN` or `anonymous` (a failed sign-in's). */
const ACTOR = new RegExp(`^(${ADMIN_TOKEN_ACTOR}|${STAFF_NAME_PATTERN.source.slice(1, -1)})$`);

/** GET /admin/audit: a page of the log, filtered by exact target, action or actor. */
export class AuditListQueryDto extends ListQueryDto {
  @TextFilter(TARGET, 'a target such as player:1002 or server:7', 'Exact target, e.g. player:1002, server:7')
  target?: string;

  @TextFilter(ACTION, 'an action such as player.ban', 'Exact action, e.g. player.ban')
  action?: string;

  @TextFilter(
    ACTOR,
    'a staff name, ADMIN_TOKEN or anonymous',
    'Who: a staff name, ADMIN_TOKEN, or anonymous (failed sign-ins)',
  )
  actor?: string;
}

export class AuditEntryResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 31 })
  id!: number;

  @ApiProperty({ type: String, description: 'Local date-time of the write', example: '2026-03-20T18:04:11' })
  time!: string;

  @ApiProperty({ type: String, example: 'player.ban' })
  action!: string;

  @ApiProperty({ type: String, example: 'player:1002' })
  target!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'What changed (never a token)',
    example: { reason: 'cheating', until: '2026-04-01T12:00:00' },
  })
  summary!: Record<string, unknown>;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The request's X-Request-Id",
    example: '3f0b6c1e-2a55-4c59-9d43-5d1f0a7e2b11',
  })
  requestId!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Source address (TRUST_PROXY applies)',
    example: '203.0.113.7',
  })
  sourceAddress!: string | null;

  @ApiProperty({
    type: String,
    description: 'Which credential (never the secret): `admin` (ADMIN_TOKEN), `session:<id>` or `token:<id>`',
    example: 'session:17',
  })
  credential!: string;

  @ApiProperty({
    type: String,
    description: "Who: the staff account's name when it acted, `ADMIN_TOKEN`, or `anonymous` (a failed sign-in)",
    example: 'alice',
  })
  actor!: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The staff account's id; null for ADMIN_TOKEN and failed sign-ins",
    example: 3,
  })
  actorId!: number | null;
}

export class AuditPage {
  @ApiProperty({ type: [AuditEntryResponse], description: 'Newest first' })
  items!: AuditEntryResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

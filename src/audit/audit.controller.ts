import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ADMIN_TOKEN_ACTOR, STAFF_NAME_PATTERN } from '../auth/auth.types';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import {
  ApiListQuery,
  bigSerialCursorKey,
  ListQuery,
  ListQueryParam,
  ListQuerySpec,
  patternFilter,
} from '../common/pagination/list-query';
import { API_TAGS } from '../openapi/api-tags';
import { AUDIT_LIST, AuditFilters, AuditService } from './audit.service';
import { AuditPage } from './dto/audit.dto';

const TARGET = /^[a-z][a-z-]*:[\x21-\x7e]{1,150}$/;
const ACTION = /^[a-z][a-z-]*(\.[a-z][a-z-]*)+$/;
/** A staff account's name, `ADMIN_TOKEN` or `anonymous` (a failed sign-in's). */
const ACTOR = new RegExp(`^(${ADMIN_TOKEN_ACTOR}|${STAFF_NAME_PATTERN.source.slice(1, -1)})$`);
const AUDIT: ListQuerySpec<AuditFilters> = {
  list: AUDIT_LIST,
  cursorKey: bigSerialCursorKey,
  filters: {
    target: patternFilter(TARGET, 'a target such as player:1002 or server:7'),
    action: patternFilter(ACTION, 'an action such as player.ban'),
    actor: patternFilter(ACTOR, 'a staff name, ADMIN_TOKEN or anonymous'),
  },
};

@ApiTags(API_TAGS.admin)
@Controller('admin/audit')
@AdminAuth()
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Permission('audit.read')
  @ApiOperation({
    summary: 'The audit log',
    description: 'One entry per successful admin write, sign-in and failed sign-in, newest first.',
  })
  @ApiListQuery(
    {
      name: 'target',
      description: 'Exact target, e.g. player:1002, server:7',
      schema: { type: 'string', pattern: TARGET.source },
    },
    {
      name: 'action',
      description: 'Exact action, e.g. player.ban',
      schema: { type: 'string', pattern: ACTION.source },
    },
    {
      name: 'actor',
      description: 'Who: a staff name, ADMIN_TOKEN, or anonymous (failed sign-ins)',
      schema: { type: 'string', pattern: ACTOR.source },
    },
  )
  @ApiOkResponse({ type: AuditPage })
  @ApiErrors({
    400: {
      description: 'limit, cursor or a filter is invalid, or the query has an unknown parameter',
      message: 'target must be a target such as player:1002 or server:7',
    },
  })
  list(@ListQueryParam(AUDIT) query: ListQuery<AuditFilters>): Promise<AuditPage> {
    return this.audit.list(query);
  }
}

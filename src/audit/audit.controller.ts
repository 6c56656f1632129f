import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { bigSerialCursorKey, listQuery, ListSpec } from '../common/pagination/list-query';
import { API_TAGS } from '../openapi/api-tags';
import { AUDIT_LIST, AuditService } from './audit.service';
import { AuditListQueryDto, AuditPage } from './dto/audit.dto';

const AUDIT: ListSpec = { list: AUDIT_LIST, cursorKey: bigSerialCursorKey };

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
  @ApiOkResponse({ type: AuditPage })
  @ApiErrors({
    400: {
      description: 'limit, cursor or a filter is invalid, or the query has an unknown parameter',
      message: 'target must be a target such as player:1002 or server:7',
    },
  })
  list(@Query() query: AuditListQueryDto): Promise<AuditPage> {
    return this.audit.list(listQuery(query, AUDIT));
  }
}

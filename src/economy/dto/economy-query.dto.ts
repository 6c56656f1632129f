import { ApiPropertyOptional } from '@nestjs/swagger';
import { PluginBody } from '../../common/validation/plugin-body';
import { MemoizedQuery } from '../../common/validation/memoized-query';
import { QueryIntRange } from '../../common/validation/strict-integer';
import { BALTOP_DEFAULT_LIMIT, BALTOP_MAX_LIMIT, HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from '../economy.service';

/**
 * GET /server/baltop, a plugin route: an unknown parameter is ignored (decisions.md "Plugin input"),
 * as before the query became a DTO; `limit` keeps its exact check.
 */
@PluginBody()
@MemoizedQuery()
export class BaltopQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: BALTOP_MAX_LIMIT,
    default: BALTOP_DEFAULT_LIMIT,
    description: 'Number of entries',
  })
  @QueryIntRange('limit', 1, BALTOP_MAX_LIMIT)
  limit?: number;
}

/** GET /admin/players/{uid}/economy. */
export class EconomyHistoryQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: HISTORY_MAX_LIMIT, default: HISTORY_DEFAULT_LIMIT })
  @QueryIntRange('limit', 1, HISTORY_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: 'Only changes with a smaller id (nextBefore of the previous page)',
  })
  @QueryIntRange('before', 1, Number.MAX_SAFE_INTEGER)
  before?: number;
}

import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuth, Permission } from '../../auth/auth.decorators';
import { Audited, AuditInput, pathId } from '../../audit/audited.decorator';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { bigSerialCursorKey, ListQueryDto, listQuery, ListSpec } from '../../common/pagination/list-query';
import { ParseBigIdPipe } from '../../common/pipes/parse-id.pipe';
import { API_TAGS } from '../../openapi/api-tags';
import { ClosedSeasonResponse, CreateSeasonDto, SeasonPage, SeasonResponse, UpdateSeasonDto } from '../dto/season.dto';
import { SEASON_LIST, SeasonService } from './season.service';

const SEASONS: ListSpec = { list: SEASON_LIST, cursorKey: bigSerialCursorKey };
const idPipe = new ParseBigIdPipe('id');
const ID_PARAM = { name: 'id', schema: { type: 'integer', format: 'int64', minimum: 1 } } as const;
const ID_400 = { description: 'id is not a positive integer', message: 'id must be a positive integer' };
const NOT_FOUND = { description: 'No season with this id', message: 'No season with id 12' };
const target = (input: AuditInput) => `season:${pathId(input, 'id')}`;
const BODY_400 =
  'A body field is missing or invalid (slug, name, local date-times, closeRule), startsAt is in the past, endsAt is not after startsAt or not in the future, or closeRule.collection is not in the catalog';

/**
 * Staff manage seasons (docs/decisions.md "Seasons: staff and the close rule"). Their boards are
 * the board routes' `period=season:<slug>`, live while open and from the archive once closed
 * (GET /admin/boards/atp?period=season:<slug>).
 */
@ApiTags(API_TAGS.admin)
@Controller('admin/seasons')
@AdminAuth()
export class SeasonAdminController {
  constructor(private readonly seasons: SeasonService) {}

  @Get()
  @Permission('boards.read')
  @ApiOperation({ summary: 'The seasons', description: 'By id ascending, closed and archived ones included.' })
  @ApiOkResponse({ type: SeasonPage })
  @ApiErrors({
    400: {
      description: 'limit or cursor is invalid, or the query has an unknown parameter',
      message: 'limit must be an integer from 1 to 200',
    },
  })
  list(@Query() query: ListQueryDto): Promise<SeasonPage> {
    return this.seasons.list(listQuery(query, SEASONS));
  }

  @Get(':id')
  @Permission('boards.read')
  @ApiOperation({ summary: 'A season' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: SeasonResponse })
  @ApiErrors({ 400: ID_400, 404: NOT_FOUND })
  get(@Param('id', idPipe) id: string): Promise<SeasonResponse> {
    return this.seasons.get(id);
  }

  @Post()
  @HttpCode(201)
  @Permission('seasons.manage')
  @ApiOperation({
    summary: 'Create a season',
    description:
      'A named period of the boards from startsAt to endsAt (local date-times), with an optional close rule. Seasons may overlap: a play counts for every open one.',
  })
  @ApiCreatedResponse({ type: SeasonResponse })
  @ApiErrors({
    400: { description: BODY_400, message: 'endsAt must be after startsAt' },
    409: { description: 'A season with this slug exists', message: 'A season with slug spring-2027 exists' },
    413: 'The body is over 256 KiB',
  })
  @Audited('season.create', ({ result }) => `season:${(result as SeasonResponse).id}`)
  create(@Body() body: CreateSeasonDto): Promise<SeasonResponse> {
    return this.seasons.create(body);
  }

  @Patch(':id')
  @Permission('seasons.manage')
  @ApiOperation({
    summary: 'Change a season',
    description:
      'While it is open: its name, its end (not in the past), its close rule (null: none); its start only before it starts. Fields left out stay.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: SeasonResponse })
  @ApiErrors({
    400: { description: `${ID_400.description}, or ${BODY_400}`, message: 'endsAt must be in the future' },
    404: NOT_FOUND,
    409: {
      description: 'The season is closed or its end has passed, or startsAt is given after it started',
      message: 'Season spring-2027 is closed',
    },
    413: 'The body is over 256 KiB',
  })
  @Audited('season.update', target)
  update(@Param('id', idPipe) id: string, @Body() body: UpdateSeasonDto): Promise<SeasonResponse> {
    return this.seasons.update(id, body);
  }

  @Post(':id/close')
  @HttpCode(200)
  @Permission('seasons.manage')
  @ApiOperation({
    summary: 'Close a season now',
    description:
      'Its end moves to now. The close is one short transaction (uploads wait only for it); the archive of its boards and its close rule (the collection to its top players, pushed to the game servers of those online) are a second, as when the period job closes a season at its end. The answer lists whom it granted. Should the archive fail (503), the season stays closed and the period job archives it at its next run.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ClosedSeasonResponse })
  @ApiErrors({
    400: ID_400,
    404: NOT_FOUND,
    409: {
      description: 'The season is closed already, or has not started',
      message: 'Season spring-2027 is closed already',
    },
  })
  @Audited('season.close', target, ({ result }) => {
    const closed = result as ClosedSeasonResponse;
    return { endsAt: closed.season.endsAt, granted: closed.granted };
  })
  close(@Param('id', idPipe) id: string): Promise<ClosedSeasonResponse> {
    return this.seasons.close(id);
  }

  @Delete(':id')
  @HttpCode(204)
  @Permission('seasons.manage')
  @ApiOperation({ summary: 'Delete a season', description: 'Only one that has not started: no play counted for it.' })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({
    400: ID_400,
    404: NOT_FOUND,
    409: {
      description: 'The season has started (close it instead)',
      message: 'Season spring-2027 has started: close it instead',
    },
  })
  @Audited('season.delete', target, () => ({}))
  remove(@Param('id', idPipe) id: string): Promise<void> {
    return this.seasons.remove(id);
  }
}

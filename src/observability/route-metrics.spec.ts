import { Controller, Get, Post } from '@nestjs/common';
import { CountAs } from '../common/decorators/route-metric.decorator';
import { PlayerController } from '../player/player.controller';
import { ServerController } from '../server/server.controller';
import { UploadController } from '../upload/upload.controller';
import { MetricsController } from './metrics.controller';
import { expressRoutes, routeMetricsOf } from './route-metrics';

@Controller('games')
class GamesController {
  @Post('start')
  @CountAs('server-login')
  start(): void {}

  @Get(':id')
  read(): void {}
}

@Controller()
class RootController {
  @Get('/scrape/')
  @CountAs('scrape')
  scrape(): void {}
}

describe('routeMetricsOf', () => {
  it('maps each @CountAs handler to METHOD /pattern as Nest registers it, and leaves the other routes out', () => {
    const registered = new Set(['POST /games/start', 'GET /games/:id', 'GET /scrape']);
    expect([...routeMetricsOf([GamesController, RootController], registered)]).toEqual([
      ['POST /games/start', 'server-login'],
      ['GET /scrape', 'scrape'],
    ]);
  });

  it('refuses a @CountAs handler that is not a route of the router, instead of counting nothing', () => {
    expect(() => routeMetricsOf([GamesController], new Set(['GET /games/:id']))).toThrow(
      new Error("@CountAs('server-login') on GamesController.start: POST /games/start is not a route of the router"),
    );
  });

  it('finds the counted routes of the service: the two logins, the upload and the scrape', () => {
    const registered = new Set([
      'POST /server/login',
      'POST /player/login',
      'POST /player/upload',
      'GET /metrics',
      'GET /server/ping',
    ]);
    expect(
      Object.fromEntries(
        routeMetricsOf([ServerController, PlayerController, UploadController, MetricsController], registered),
      ),
    ).toEqual({
      'POST /server/login': 'server-login',
      'POST /player/login': 'player-login',
      'POST /player/upload': 'upload',
      'GET /metrics': 'scrape',
    });
  });
});

describe('expressRoutes', () => {
  it('lists METHOD /path of every route layer, one per method, and skips middleware layers', () => {
    const stack: { name?: string; route?: { path: unknown; methods: Record<string, boolean> } }[] = [
      { name: 'query' },
      { route: { path: '/server/login', methods: { post: true } } },
      { route: { path: '/a', methods: { get: true, head: false, delete: true } } },
      { route: { path: /regex/, methods: { get: true } } },
    ];
    expect([...expressRoutes({ stack })]).toEqual(['POST /server/login', 'GET /a', 'DELETE /a']);
  });
});

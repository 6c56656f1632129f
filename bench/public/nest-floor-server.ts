/**
 * The framework's floor for the public API benchmark (bench/public/run.ts, `FLOOR=1`): the routes
 * of bare-server.ts, with the same statements and answers (answers.ts), in a NestJS application on
 * Express with nothing of the service's: one module, one controller, Nest's defaults (its router
 * execution context and JSON body parser), no guard, pipe, interceptor, filter, logger, ETag or
 * metrics. The service is NestJS on Express by the stack's rule, so what this server costs over
 * bare Express is a part of the service's gap to the bare handler that no change of the service's
 * own code can take away.
 */
import { Controller, Get, Inject, Module, Param, Query } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Pool } from 'pg';
import { serveBare } from '../harness/bare';
import { atpBoard, baltop, chartBoard, limitOf } from './answers';
import { PUBLIC_DATABASE_URL } from './generate';

const POOL = Symbol('pool');
const pool = new Pool({ connectionString: PUBLIC_DATABASE_URL, max: 10 });

@Controller()
class FloorController {
  constructor(@Inject(POOL) private readonly pool: Pool) {}

  @Get('health/ready')
  ready() {
    return { status: 'ok' };
  }

  @Get('server/baltop')
  baltop(@Query('limit') limit: unknown) {
    return baltop(this.pool, limitOf(limit));
  }

  @Get('public/v1/boards/atp')
  atp(@Query('limit') limit: unknown) {
    return atpBoard(this.pool, limitOf(limit));
  }

  @Get('public/v1/boards/charts/:levelId')
  chart(@Param('levelId') levelId: string, @Query('limit') limit: unknown) {
    return chartBoard(this.pool, Number(levelId), limitOf(limit));
  }
}

@Module({ controllers: [FloorController], providers: [{ provide: POOL, useValue: pool }] })
class FloorModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: false });
  app.disable('x-powered-by');
  app.set('etag', false);
  await app.init();
  serveBare(app.getHttpAdapter().getInstance(), pool);
}

void main();

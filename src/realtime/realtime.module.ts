import { Global, Module } from '@nestjs/common';
import { EVENT_BUS } from './events';
import { InProcessEventBus } from './in-process-event-bus';

@Global()
@Module({
  providers: [{ provide: EVENT_BUS, useFactory: () => new InProcessEventBus() }],
  exports: [EVENT_BUS],
})
export class RealtimeModule {}

import { Injectable } from '@nestjs/common';

/**
 * The service's clock for what follows the calendar: the periods of the boards and the rating history's days (which day, week,
 * month or season a play counts for, and when a period is due to close). One provider, so a test
 * can move it (jest.spyOn(app.get(Clock), 'now')) and cross a period boundary without waiting.
 * Session expiry and the database's own now() keep their clocks.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

import { Injectable } from '@nestjs/common';
import { CountGate } from './count-gate';

const REFUSED =
  'This window is counted in the database (a live period, or a group or country board), and this instance is ' +
  'counting as many of those as it may; retry later';
const REFUSED_CALLER =
  'This window is counted in the database (a live period, or a group or country board), and this caller has one ' +
  'being counted and 16 waiting already; retry later';

/**
 * At once per instance: two of the pool's ten connections, as the rank counts of RankAnswerService
 * (docs/decisions.md "Windows counted in SQL"); the others wait in order up to 3 s, then 503. One
 * caller (a game server, a staff account, an API key, an anonymous address) has at most one
 * counted at once and 16 waiting: the 18th at once is refused at once.
 */
const BOARD_COUNT_LIMITS = { concurrency: 2, queue: 64, maxWaitMs: 3_000, retryAfterSeconds: 5, perCallerQueue: 16 };

/**
 * The board windows whose rank is a SQL count of the unbanned rows ahead, at PostgreSQL's pace
 * instead of the callers': a live period's window (1M players: 0.3–1.1 s of a connection each) and
 * a group's or country's window (a count within the scope). Without it, sixteen public callers
 * asking at once hold every pooled connection, and logins, uploads and syncs wait out the pool's
 * acquire timeout and answer 503 (docs/benchmarks.md "Closing a period and archived reads"). One
 * gate for the module: LeaderboardService (scoped windows) and PeriodService (live windows). Fair
 * between callers, so one caller asking many at once (a key's script) holds one slot, not both.
 */
@Injectable()
export class BoardCountGate extends CountGate {
  constructor() {
    super(BOARD_COUNT_LIMITS, REFUSED, REFUSED_CALLER);
  }
}

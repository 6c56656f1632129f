import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { keepKick } from '../common/events/player-frames';
import type { Frame } from './dto/realtime.dto';
import { RealtimeOutboxEntity } from './entities/realtime-outbox.entity';
import { WsConnectionEntity } from './entities/ws-connection.entity';

/** A connection is listed while open and seen by its instance within this many seconds. */
export const CONNECTION_STALE_SECONDS = 90;

@Injectable()
export class RealtimeRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get connections() {
    return this.dataSource.getRepository(WsConnectionEntity);
  }

  async recordOpen(connection: Omit<WsConnectionEntity, 'closedAt' | 'closeCode' | 'lastSeenAt'>): Promise<void> {
    await this.connections.insert({
      ...connection,
      lastSeenAt: connection.connectedAt,
      closedAt: null,
      closeCode: null,
    });
  }

  async recordClose(id: string, code: number): Promise<void> {
    await this.connections.update({ id, closedAt: IsNull() }, { closedAt: new Date(), closeCode: code });
  }

  async touchInstance(instanceId: string): Promise<void> {
    await this.connections.update({ instanceId, closedAt: IsNull() }, { lastSeenAt: new Date() });
  }

  listOpen(): Promise<WsConnectionEntity[]> {
    return this.connections
      .createQueryBuilder('c')
      .where('c.closed_at IS NULL')
      .andWhere(`c.last_seen_at > now() - make_interval(secs => :stale)`, { stale: CONNECTION_STALE_SECONDS })
      .orderBy('c.connected_at', 'ASC')
      .getMany();
  }

  /**
   * Keeps `frame` (a kick) for each session until a socket of it takes the frame (keepKick: the ban
   * wrote the same rows in its transaction already, so this changes nothing unless a kick comes
   * without them). They expire with the rest (`expiresAt`).
   */
  async keepForSessions(eventId: string, sessionIds: string[], frame: Frame, expiresAt: Date): Promise<void> {
    await keepKick(this.dataSource.manager, eventId, sessionIds, frame, expiresAt);
  }

  /** Marks one kept frame delivered; true when this caller took it (nobody had before). */
  async take(eventId: string, sessionId: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(RealtimeOutboxEntity)
      .createQueryBuilder()
      .update()
      .set({ deliveredAt: () => 'now()' })
      .where('event_id = :eventId AND server_session_id = :sessionId AND delivered_at IS NULL', { eventId, sessionId })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Gives a taken frame back (the socket closed before it could be sent). */
  async giveBack(eventId: string, sessionId: string): Promise<void> {
    await this.dataSource
      .getRepository(RealtimeOutboxEntity)
      .update({ eventId, serverSessionId: sessionId }, { deliveredAt: null });
  }

  /** Takes every frame still kept for the sessions and not expired, oldest first, but frames of the `except` events. */
  async takePending(
    sessionIds: string[],
    except: string[] = [],
  ): Promise<Array<{ sessionId: string; eventId: string; frame: Frame }>> {
    if (sessionIds.length === 0) return [];
    // A CTE so that the statement is a SELECT: ordered, and answered as rows by TypeORM.
    return this.dataSource.query<Array<{ sessionId: string; eventId: string; frame: Frame }>>(
      `WITH taken AS (
         UPDATE realtime_outbox SET delivered_at = now()
          WHERE server_session_id = ANY($1::uuid[]) AND delivered_at IS NULL AND expires_at > now()
            AND NOT (frame->>'event' = ANY($2::text[]))
          RETURNING server_session_id, event_id, frame, created_at
       )
       SELECT server_session_id AS "sessionId", event_id AS "eventId", frame FROM taken ORDER BY created_at, event_id`,
      [sessionIds, except],
    );
  }

  /** Forgets expired frames, delivered or not. */
  async sweepOutbox(): Promise<void> {
    await this.dataSource.query('DELETE FROM realtime_outbox WHERE expires_at <= now()');
  }
}

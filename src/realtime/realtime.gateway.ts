import { UseFilters } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  OnGatewayConnection,
  OnGatewayDisconnect,
  SubscribeMessage,
  WebSocketGateway,
} from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { Frame } from './dto/realtime.dto';
import { ConnectionRegistry } from './connection-registry';
import { RealtimeService } from './realtime.service';
import { WsExceptionsFilter } from './ws-exceptions.filter';

/**
 * The one WebSocket endpoint, at /ws on the HTTP port (decisions.md §7). Sockets come and go in
 * ConnectionRegistry (through RealtimeService when one opens: it delivers what was kept); frames go to RealtimeService.
 */
@WebSocketGateway({ path: '/ws' })
@UseFilters(WsExceptionsFilter)
export class RealtimeGateway implements OnGatewayConnection, OnGatewayDisconnect {
  constructor(
    private readonly realtime: RealtimeService,
    private readonly registry: ConnectionRegistry,
  ) {}

  async handleConnection(socket: WebSocket, request: IncomingMessage): Promise<void> {
    await this.realtime.connected(socket, request);
  }

  handleDisconnect(socket: WebSocket): void {
    this.registry.unregister(socket);
  }

  @SubscribeMessage('resume_session')
  resumeSession(@ConnectedSocket() socket: WebSocket, @MessageBody() data: Record<string, unknown>): Promise<Frame> {
    return this.realtime.resumeSession(socket, data);
  }

  @SubscribeMessage('board_updates')
  boardUpdates(@ConnectedSocket() socket: WebSocket, @MessageBody() data: Record<string, unknown>): Promise<Frame> {
    return this.realtime.boardUpdates(socket, data);
  }

  @SubscribeMessage('collection_updates')
  collectionUpdates(
    @ConnectedSocket() socket: WebSocket,
    @MessageBody() data: Record<string, unknown>,
  ): Promise<Frame> {
    return this.realtime.collectionUpdates(socket, data);
  }

  @SubscribeMessage('chat')
  chat(@ConnectedSocket() socket: WebSocket, @MessageBody() data: Record<string, unknown>): Promise<Frame | undefined> {
    return this.realtime.chat(socket, data);
  }
}

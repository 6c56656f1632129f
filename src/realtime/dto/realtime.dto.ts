import { ApiProperty } from '@nestjs/swagger';
import { Check } from '../../common/validation/check';
import { IsUid } from '../../common/validation/is-uid';

export const MAX_CHAT_LENGTH = 256;

/** A WebSocket frame (decisions.md §7): JSON text `{"event": string, "data": object}`. */
export interface Frame<T = Record<string, unknown>> {
  event: string;
  data: T;
}

/*
 * The `data` of each client→server frame, validated by parseFrameData. Unknown fields are ignored
 * (the plugin may send more over time); the first problem, in field order, is the answer.
 */

/** `resume_session` {uid, accessToken}. */
export class ResumeSessionData {
  @IsUid()
  uid!: string;

  @Check(
    'isAccessToken',
    (value) => typeof value === 'string' && value.length > 0 && value.length <= 512,
    'accessToken must be a non-empty string',
  )
  accessToken!: string;
}

/** `chat` {uid, message}. */
export class ChatData {
  @IsUid()
  uid!: string;

  @Check(
    'isChatLine',
    (value) => typeof value === 'string' && value.trim().length > 0 && value.length <= MAX_CHAT_LENGTH,
    `message must be a non-empty string of at most ${MAX_CHAT_LENGTH} characters`,
  )
  message!: string;
}

/**
 * `board_updates` and `collection_updates` {enabled}: whether this socket wants `board_update`
 * (docs/decisions.md "Live board updates") or `collections_granted` frames.
 */
export class OptInData {
  @Check('isBoolean', (value) => typeof value === 'boolean', 'enabled must be a boolean')
  enabled!: boolean;
}

export class OpenConnectionResponse {
  @ApiProperty({ type: String, format: 'uuid', example: '0b0f4bb5-6f0c-4a86-8d7b-2f9c3a6f1e11' })
  connectionId!: string;

  @ApiProperty({ type: 'integer', example: 1 })
  serverID!: number;

  @ApiProperty({
    type: String,
    description: 'The service instance holding the socket',
    example: '5d1c0e0a-3f7e-4a3b-9a34-8a1f4e2b7c55',
  })
  instanceId!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Address of the game server as the instance saw it',
    example: '203.0.113.7',
  })
  remoteAddress!: string | null;

  @ApiProperty({ type: String, description: 'Local date-time the socket opened', example: '2026-03-20T18:00:02' })
  connectedAt!: string;
}

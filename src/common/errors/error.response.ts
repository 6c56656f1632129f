import { ApiProperty } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from './app-error';

/** The body of every non-2xx answer (decisions.md §2); documentation of what mapError() writes. */
export class ErrorResponse {
  @ApiProperty({ description: 'Error code', enum: ERROR_CODES, enumName: 'ErrorCode', example: 'BAD_REQUEST' })
  error!: ErrorCode;

  @ApiProperty({
    type: String,
    description: 'Human-readable description; for 400 it names every bad field',
    example: 'pluginVersion must be an integer number',
  })
  message!: string;
}

/** 426 of POST /server/login: where to get an accepted plugin build. */
export class UpgradeRequiredResponse extends ErrorResponse {
  @ApiProperty({
    type: 'integer',
    description: "The plugin version to upgrade to (the policy's latestPluginVersion)",
    example: 42,
  })
  toVersion!: number;

  @ApiProperty({
    type: String,
    description: 'Download address of that build',
    example: 'https://example.org/rhythmc-42.jar',
  })
  downUrl!: string;
}

/** 430 of POST /player/login (interface.md "Ban response"). */
export class BannedResponse extends ErrorResponse {
  @ApiProperty({ type: String, description: 'Ban reason; empty string when absent', example: 'cheating' })
  reason!: string;

  @ApiProperty({
    type: String,
    description:
      'End of the ban as an ISO 8601 local date-time (YYYY-MM-DDTHH:mm:ss); empty string for a permanent ban',
    example: '2026-04-01T12:00:00',
  })
  until!: string;
}

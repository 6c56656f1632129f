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

/** One entry of a 400's `errors` (FieldProblem). */
export class FieldProblemResponse {
  @ApiProperty({
    type: 'integer',
    required: false,
    minimum: 0,
    description: "The element's position when the request is a list (a batch body, a list of paths); absent otherwise",
    example: 3,
  })
  index?: number;

  @ApiProperty({
    type: String,
    maxLength: 64,
    description:
      "Path of the field: nested objects with dots (`options.speed`, `player.playerUID`), inside the element when `index` is given; `''` for the element or body as a whole. An unknown field is named as sent, cut at 64 characters",
    example: 'name',
  })
  field!: string;

  @ApiProperty({
    type: String,
    description: "What is wrong with the field, without its name (an unknown field: 'unknown field')",
    example: 'must be shorter than or equal to 64 characters',
  })
  message!: string;
}

/** 400: the body of §2, plus the problems by field (docs/decisions.md "Errors"). */
export class BadRequestResponse extends ErrorResponse {
  @ApiProperty({
    type: () => [FieldProblemResponse],
    maxItems: 20,
    description:
      'The problems by field, at most 20 (message lists them all, or counts the rest); empty when the request is wrong as a whole (malformed JSON, a body that is not an object)',
  })
  errors!: FieldProblemResponse[];
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

import { ApiProperty } from '@nestjs/swagger';

export class BootstrapTokenResponse {
  @ApiProperty({
    type: String,
    description: 'The new bootstrap token; the old one stops working',
    example: 'Qm9vdHN0cmFwVG9rZW5FeGFtcGxlMDEyMzQ1Njc4OWFi',
  })
  bootstrapToken!: string;
}

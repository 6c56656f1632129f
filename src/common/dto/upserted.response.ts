import { ApiProperty } from '@nestjs/swagger';

/** Answer of the admin batch upserts (decisions.md §8): PUT /admin/collections, /admin/charts, /admin/packs. */
export class UpsertedResponse {
  @ApiProperty({ type: 'integer', description: 'Entries inserted or updated', example: 2 })
  upserted!: number;
}

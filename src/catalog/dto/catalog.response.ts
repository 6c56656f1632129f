/** interface.md "Collection". */
export class CollectionResponse {
  key!: string;
  type!: string;
  unlockMethod!: Record<string, unknown>;
  properties!: Record<string, unknown>;
}

/** interface.md "Chart catalog entry"; createdAt is an ISO local date-time without zone. */
export class ChartResponse {
  levelId!: number;
  name!: string;
  difficultyConstant!: number;
  version!: string;
  createdAt!: string;
}

/** Answer of the admin batch upserts (decisions.md §8). */
export class UpsertedResponse {
  upserted!: number;
}

/** Title metadata used for prefix/suffix selection and chat decoration (decisions.md §7). */
export interface TitleInfo {
  key: string;
  title: string;
  description: string | string[];
  rarity: string;
  position: boolean;
}

/** A chart as other modules see it (upload uses the constant for ratings). */
export interface ChartInfo {
  levelId: number;
  name: string;
  difficultyConstant: number;
  version: string;
  active: boolean;
  /** Created by an upload for an unknown level: its plays are unranked. */
  placeholder: boolean;
  /** The note count plays are checked against; null: unknown. */
  notes: number | null;
}

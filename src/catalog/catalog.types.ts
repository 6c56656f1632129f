/** Title metadata used for prefix/suffix selection and chat decoration (decisions.md §7). */
export interface TitleInfo {
  key: string;
  title: string;
  description: string | string[];
  rarity: string;
  position: boolean;
}

/** POST /admin/resources/rescan (decisions.md §8): files in the index after the scan, and their total size. */
export class RescanResponse {
  data!: number;
  lang!: number;
  packs!: number;
  bytes!: number;
}

/** interface.md "Download info entry". */
export class DownloadEntry {
  path!: string;
  url!: string;
  bytes!: number;
  sha256!: string;
}

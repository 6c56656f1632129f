/** interface.md "Player profile response", plus uid, username, displayName (decisions.md §4). */
export class PlayerProfileResponse {
  uid!: number;
  username!: string;
  displayName!: string;
  /** The data version stored before this login. */
  version!: number;
  banstate!: number;
  accessToken!: string;
  expiresIn!: number;
  /** '' while continueEnabled is false. */
  resumeToken!: string;
  resumeExpiresIn!: number;
  /** Selected title keys ('' when none). */
  playerPrefix!: string;
  playerSuffix!: string;
  options!: Record<string, unknown> & {
    continueEnabled: boolean;
    sound: Record<string, unknown>;
    songSelectionState: Record<string, unknown>;
  };
  data!: { collections: string[] };
}

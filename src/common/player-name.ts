/** The name shown for a player (interface.md: displayName, else the username): an empty display name falls back too. */
export function shownName(displayName: string | null | undefined, username: string): string {
  return displayName || username;
}

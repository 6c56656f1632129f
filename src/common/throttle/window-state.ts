/** Where a caller stands after one counted call. */
export interface WindowState {
  limit: number;
  /** Calls left in the window (0 once over). */
  remaining: number;
  /** Seconds until the window (or, once over the limit, the block) ends. */
  resetSeconds: number;
  /** Set when the call is refused: seconds to wait (Retry-After). */
  retryAfterSeconds: number | null;
}

/**
 * Wire times are ISO 8601 local date-times without zone, `YYYY-MM-DDTHH:mm:ss`, in the service's
 * time zone (the process TZ; UTC unless TZ says otherwise) — decisions.md §8.
 */
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

export function formatLocalDateTime(date: Date): string {
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** Parses a local date-time; null when the text is not one or names an impossible date. */
export function parseLocalDateTime(text: string): Date | null {
  const match = LOCAL_DATE_TIME.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  const date = new Date(year, month - 1, day, hour, minute, second);
  const roundTrips =
    date.getFullYear() === year &&
    date.getMonth() === month - 1 &&
    date.getDate() === day &&
    date.getHours() === hour &&
    date.getMinutes() === minute &&
    date.getSeconds() === second;
  return roundTrips ? date : null;
}

const DAY_MS = 86_400_000;

/** Day `day` as `YYYY-MM-DD`. */
export function formatDayNumber(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

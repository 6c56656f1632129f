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

/** The service's calendar day of `date` (its time zone, as for wire times), as days since 1970-01-01. */
export function localDayNumber(date: Date): number {
  return Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()) / DAY_MS;
}

/** The first instant of the service's calendar day `day` (local midnight; days are 23 or 25 hours across a DST change). */
export function localDayStart(day: number): Date {
  const date = new Date(day * DAY_MS);
  return new Date(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

/** Day `day` as `YYYY-MM-DD`. */
export function formatDayNumber(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
